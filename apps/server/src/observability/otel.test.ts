// OpenTelemetry end to end: a server with OTEL_EXPORTER_OTLP_ENDPOINT set sends its spans and
// metrics to a local OTLP/HTTP receiver (JSON encoding). OpenTelemetry's SDK registers itself
// process-wide, so this file (its own test process) is the only one that turns it on.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createBot, deploy, FHIR_JSON, post, waitFor } from '../bots/testing.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}
interface Received {
  path: string;
  contentType: string;
  traceparent?: string;
  body: string;
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

let receiver: Server;
const received: Received[] = [];
let t: TestApp;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        traceparent: req.headers.traceparent as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      // An OTLP success: an empty Export*ServiceResponse.
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  t = await createTestApp({
    listen: true,
    config: { otelEndpoint: `http://127.0.0.1:${port}/`, outboundAllowList: ['127.0.0.1'] },
    otelEnv: {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'hearth-under-test',
      // Exported when flushed by the test, not on a timer.
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

function spans(): OtlpSpan[] {
  return received
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) => (JSON.parse(r.body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans)
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}

function attr(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

/** The spans of one trace below `root`, depth first. */
function descendants(all: OtlpSpan[], root: OtlpSpan): OtlpSpan[] {
  const children = all.filter((s) => s.traceId === root.traceId && s.parentSpanId === root.spanId);
  return children.flatMap((child) => [child, ...descendants(all, child)]);
}

describe('OpenTelemetry over OTLP', () => {
  it('exports a create as a server span with the FHIR attributes, continuing the caller trace, with SQL spans under it', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const res = await fetch(new URL('fhir/R4/Patient', t.baseUrl), {
      method: 'POST',
      headers: {
        ...t.authHeaders,
        'content-type': FHIR_JSON,
        traceparent: `00-${traceId}-${parentId}-01`,
      },
      body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Oteltestfamily' }] }),
    });
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id');
    await t.telemetry.flush?.();

    const all = spans();
    const request = all.find((s) => s.kind === SPAN_KIND_SERVER && s.traceId === traceId);
    expect(request).toBeDefined();
    expect(request!.parentSpanId).toBe(parentId);
    expect(request!.name).toBe('POST /fhir/R4/:resourceType');
    expect(attr(request!, 'hearth.interaction')).toBe('create');
    expect(attr(request!, 'fhir.resource_type')).toBe('Patient');
    expect(attr(request!, 'hearth.project')).toBe(t.testProject.projectId);
    expect(attr(request!, 'hearth.request_id')).toBe(requestId);
    expect(attr(request!, 'http.request.method')).toBe('POST');
    expect(attr(request!, 'http.route')).toBe('/fhir/R4/:resourceType');
    expect(attr(request!, 'http.response.status_code')).toBe(201);
    expect(attr(request!, 'hearth.user')).toMatch(/^Practitioner\//);

    const sql = descendants(all, request!).filter((s) => s.kind === SPAN_KIND_CLIENT);
    expect(sql.length).toBeGreaterThan(0);
    const insert = sql.find((s) => String(attr(s, 'db.query.text')).includes('INSERT'));
    expect(insert).toBeDefined();
    expect(attr(insert!, 'db.system.name')).toBe('postgresql');
    expect(['INSERT', 'WITH']).toContain(insert!.name);
    expect(attr(insert!, 'db.namespace')).toBe(new URL(t.db.url).pathname.slice(1));
    // Statements are parameterised: the patient's name is in no span (nor the token).
    const exported = received.map((r) => r.body).join('\n');
    expect(exported).not.toContain('Oteltestfamily');
    expect(exported).not.toContain(t.token);

    const service = received.filter((r) => r.path === '/v1/traces').some((r) => r.body.includes('"hearth-under-test"'));
    expect(service).toBe(true);
  });

  it('exports the request metrics over OTLP, from the same registry /metrics serves', async () => {
    await t.telemetry.flush?.();
    const metrics = received.filter((r) => r.path === '/v1/metrics');
    expect(metrics.length).toBeGreaterThan(0);
    const last = JSON.parse(metrics[metrics.length - 1].body) as {
      resourceMetrics: {
        scopeMetrics: {
          metrics: {
            name: string;
            histogram?: { dataPoints: { attributes: { key: string; value: OtlpValue }[]; count: number | string }[] };
          }[];
        }[];
      }[];
    };
    const all = last.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics));
    const requests = all.find((m) => m.name === 'hearth_http_request_duration_seconds');
    const creates = requests?.histogram?.dataPoints.filter((p) =>
      p.attributes.some((a) => a.key === 'interaction' && a.value.stringValue === 'create'),
    );
    expect(creates?.reduce((n, p) => n + Number(p.count), 0)).toBeGreaterThanOrEqual(1);
    expect(all.map((m) => m.name)).toEqual(
      expect.arrayContaining(['hearth_db_pool_connections', 'process_resident_memory_bytes']),
    );
  });

  it('exports a bot run as a span under its $execute request, and a subscription delivery in a job span', async () => {
    const bot = await createBot(t);
    await deploy(t, bot.id, 'export async function handler(_c: unknown, e: { input: unknown }) { return e.input; }');
    const hook = received.length;
    const sub = await post(
      t,
      'fhir/R4/Subscription',
      {
        resourceType: 'Subscription',
        status: 'active',
        reason: 'otel',
        criteria: 'Device?manufacturer=otel-co',
        channel: { type: 'rest-hook', endpoint: `${receiverUrl()}hook`, payload: FHIR_JSON },
      },
      FHIR_JSON,
    );
    expect(sub.status).toBe(201);
    const subscriptionId = (sub.json() as { id: string }).id;
    expect((await post(t, `fhir/R4/Bot/${bot.id}/$execute`, { a: 1 })).status).toBe(200);
    expect(
      (await post(t, 'fhir/R4/Device', { resourceType: 'Device', manufacturer: 'otel-co' }, FHIR_JSON)).status,
    ).toBe(201);
    await waitFor(() => received.slice(hook).some((r) => r.path === '/hook') || undefined);

    const delivery = await waitFor(async () => {
      await t.telemetry.flush?.();
      return spans().find(
        (s) =>
          s.name === 'subscription delivery' && attr(s, 'hearth.subscription') === `Subscription/${subscriptionId}`,
      );
    });
    expect(attr(delivery, 'hearth.subscription.channel')).toBe('rest-hook');
    const all = spans();
    const job = all.find((s) => s.spanId === delivery.parentSpanId);
    expect(job?.name).toMatch(/^job /);
    expect(attr(job!, 'hearth.job.queue')).toBeTypeOf('string');
    // The rest-hook's POST: a client span under the delivery, continued by the receiver's traceparent.
    const outbound = all.find(
      (s) => s.parentSpanId === delivery.spanId && s.kind === SPAN_KIND_CLIENT && s.name === 'POST',
    );
    expect(outbound).toBeDefined();
    expect(attr(outbound!, 'server.address')).toBe('127.0.0.1');
    expect(attr(outbound!, 'http.response.status_code')).toBe(200);
    const arrived = received.find((r) => r.path === '/hook');
    expect(arrived?.traceparent).toBe(`00-${outbound!.traceId}-${outbound!.spanId}-01`);

    const run = all.find((s) => s.name === `bot Bot/${bot.id}`);
    expect(run).toBeDefined();
    const execute = all.find((s) => s.spanId === run!.parentSpanId);
    expect(execute?.kind).toBe(SPAN_KIND_SERVER);
    expect(attr(execute!, 'hearth.interaction')).toBe('operation');
    expect(attr(execute!, 'hearth.operation')).toBe('execute');
    expect(attr(execute!, 'fhir.resource_type')).toBe('Bot');
  });
});

function receiverUrl(): string {
  const address = receiver.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
}
