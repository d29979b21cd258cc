// GET /metrics: Prometheus' text format behind HEARTH_METRICS_TOKEN, scraped after real traffic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from '../test/app.js';
import { createBot, deploy, FHIR_JSON, post, waitFor } from '../bots/testing.js';
import { startReceiver, type Receiver } from '../subscriptions/testing.js';

const TOKEN = 'scrape-token-0123456789';
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp({
    listen: true,
    config: { metricsToken: TOKEN, outboundAllowList: ['127.0.0.1'], jobPollingIntervalMs: 500 },
  });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function scrape(token = TOKEN): Promise<{ status: number; contentType: string | null; text: string }> {
  const res = await fetch(new URL('metrics', t.baseUrl), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

/** The value of one series, by its exact name and labels as Prometheus writes them; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  it('answers 401 with an OperationOutcome without the token, or with another', async () => {
    const none = await fetch(new URL('metrics', t.baseUrl));
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect(((await none.json()) as { resourceType: string }).resourceType).toBe('OperationOutcome');
    expect((await scrape('not-the-token')).status).toBe(401);
    // A project admin's access token is no metrics token either.
    expect((await scrape(t.token)).status).toBe(401);
  });

  it('does not exist without HEARTH_METRICS_TOKEN: 404, and nothing is measured', async () => {
    const plain = await createTestApp({ db: t.db, config: { workersEnabled: false } });
    try {
      const res = await plain.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.statusCode).toBe(404);
      expect((res.json() as { resourceType: string }).resourceType).toBe('OperationOutcome');
      expect(plain.telemetry.metrics).toBeUndefined();
      expect(plain.telemetry.tracer).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('counts requests by interaction and status, and reports the pool, the queues, bots, deliveries, websockets and the process', async () => {
    // A websocket open while scraped, one closed before.
    const wsUrl = `${t.baseUrl.replace(/^http/, 'ws')}ws/subscriptions-r4`;
    const open = new WebSocket(wsUrl);
    await new Promise((resolve, reject) => open.once('open', resolve).once('error', reject));
    const closed = new WebSocket(wsUrl);
    await new Promise((resolve, reject) => closed.once('open', resolve).once('error', reject));
    closed.close();
    await new Promise((resolve) => closed.once('close', resolve));

    const missing = await fetch(new URL('fhir/R4/Patient/no-such-patient', t.baseUrl), { headers: t.authHeaders });
    expect(missing.status).toBe(404);
    const search = await fetch(new URL('fhir/R4/Patient?name=Metricsname', t.baseUrl), { headers: t.authHeaders });
    expect(search.status).toBe(200);

    const bot = await createBot(t);
    await deploy(t, bot.id, 'export async function handler() { return 1; }');
    expect((await post(t, `fhir/R4/Bot/${bot.id}/$execute`, {})).status).toBe(200);

    const sub = {
      resourceType: 'Subscription',
      status: 'active',
      reason: 'metrics',
      criteria: 'Device?manufacturer=metrics-co',
      channel: { type: 'rest-hook', endpoint: `${receiver.url}/hook`, payload: FHIR_JSON },
    };
    expect((await post(t, 'fhir/R4/Subscription', sub, FHIR_JSON)).status).toBe(201);
    expect(
      (await post(t, 'fhir/R4/Device', { resourceType: 'Device', manufacturer: 'metrics-co' }, FHIR_JSON)).status,
    ).toBe(201);

    const { status, contentType, text } = await waitFor(async () => {
      const scraped = await scrape();
      return (sample(scraped.text, 'hearth_subscription_deliveries_total{channel="rest-hook",outcome="delivered"}') ??
        0) >= 1
        ? scraped
        : undefined;
    });
    expect(status).toBe(200);
    expect(contentType).toContain('text/plain');
    expect(text).not.toContain(TOKEN);

    // Requests: by method, route, FHIR interaction and status.
    expect(
      sample(
        text,
        'hearth_http_request_duration_seconds_count{method="GET",route="/fhir/R4/:resourceType/:id",interaction="read",status="404"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'hearth_http_request_duration_seconds_count{method="GET",route="/fhir/R4/:resourceType",interaction="search-type",status="200"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'hearth_http_request_duration_seconds_count{method="POST",route="/fhir/R4/:resourceType",interaction="create",status="201"}',
      ),
    ).toBeGreaterThanOrEqual(2);
    // $deploy and $execute, each at the route it is served by.
    const operations = text
      .split('\n')
      .filter((l) =>
        /^hearth_http_request_duration_seconds_count\{method="POST",route="[^"]+",interaction="operation",status="200"\} /.test(
          l,
        ),
      );
    expect(operations.reduce((n, l) => n + Number(l.split(' ')[1]), 0)).toBeGreaterThanOrEqual(2);
    // The search's value is nowhere (labels are route patterns).
    expect(text).not.toContain('Metricsname');

    // The pool: its limit, open connections, waits.
    expect(sample(text, 'hearth_db_pool_connections{pool="main",state="max"}')).toBe(t.config.databasePoolSize);
    expect(sample(text, 'hearth_db_pool_connections{pool="main",state="total"}')).toBeGreaterThanOrEqual(1);
    // Background work may be waiting for a connection being opened at that moment: present, not necessarily 0.
    expect(sample(text, 'hearth_db_pool_waiting{pool="main"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'hearth_db_pool_acquire_seconds_count{pool="main"}')).toBeGreaterThan(0);
    expect(sample(text, 'hearth_db_pool_connections{pool="jobs",state="max"}')).toBeGreaterThan(0);

    // The queues: every defined queue has its depth and age, jobs are timed.
    const queues = (await t.services.automation.jobs.depths()).map((d) => d.queue);
    expect(queues.length).toBeGreaterThan(2);
    for (const queue of queues) {
      expect(sample(text, `hearth_job_queue_depth{queue="${queue}",state="waiting"}`)).toBeGreaterThanOrEqual(0);
      expect(sample(text, `hearth_job_queue_oldest_age_seconds{queue="${queue}"}`)).toBeGreaterThanOrEqual(0);
    }
    expect(text).toMatch(/^hearth_job_duration_seconds_count\{queue="[^"]+",outcome="completed"\} [1-9]/m);

    expect(sample(text, 'hearth_bot_run_duration_seconds_count{outcome="ok"}')).toBe(1);
    expect(sample(text, 'hearth_websocket_connections{endpoint="subscriptions"}')).toBe(1);

    // The process: memory, event-loop delay (prom-client's default metrics).
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);

    open.close();
    await waitFor(async () =>
      sample((await scrape()).text, 'hearth_websocket_connections{endpoint="subscriptions"}') === 0 ? true : undefined,
    );
  });

  it('reports a waiting job and the age of the oldest by queue', async () => {
    // The workers stop (the last test), so the job stays where it is put: due a minute ago.
    await t.services.automation.jobs.stop(5000);
    const [queue] = (await t.services.automation.jobs.depths()).map((d) => d.queue);
    await t.pool.query(
      `INSERT INTO pgboss.job (name, data, start_after, state) VALUES ($1, '{}'::jsonb, now() - interval '60 seconds', 'created')`,
      [queue],
    );
    const { text } = await scrape();
    expect(sample(text, `hearth_job_queue_depth{queue="${queue}",state="waiting"}`)).toBe(1);
    expect(sample(text, `hearth_job_queue_oldest_age_seconds{queue="${queue}"}`)).toBeGreaterThanOrEqual(59);
  });
});
