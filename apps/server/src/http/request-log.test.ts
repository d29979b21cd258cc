import { describe, expect, it } from 'vitest';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { RequestLog, urlWithoutQueryValues } from './request-log.js';
import { telemetryHooks, tracedServerFactory } from './telemetry.js';

async function logLinesOf(level: string, url: string): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level }, sink);
  const app = Fastify({
    loggerInstance: logger as unknown as FastifyBaseLogger,
    logController: new RequestLog(logger.isLevelEnabled('info')),
  });
  app.get('/fhir/R4/Patient', async () => ({ resourceType: 'Bundle' }));
  await app.inject({ method: 'GET', url, headers: { 'x-request-id': 'given-id' } });
  await app.close();
  return lines;
}

describe('request log', () => {
  it('writes one line per request, when it is done, without query values', async () => {
    const lines = await logLinesOf('info', '/fhir/R4/Patient?name=Smith&birthdate=1970-01-01&_summary');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      method: 'GET',
      url: '/fhir/R4/Patient?name=&birthdate=&_summary',
      statusCode: 200,
      remoteAddress: '127.0.0.1',
      // A FHIR request's line names its interaction and type (project and user once signed in).
      interaction: 'search-type',
      resourceType: 'Patient',
    });
    expect(typeof lines[0].reqId).toBe('string');
    expect(typeof lines[0].responseTime).toBe('number');
    expect(JSON.stringify(lines[0])).not.toContain('Smith');
  });

  it('names the request span in the line when traces are exported', async () => {
    const spans = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const tracer = provider.getTracer('test');
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const app = Fastify({
      loggerInstance: logger as unknown as FastifyBaseLogger,
      logController: new RequestLog(true),
      serverFactory: tracedServerFactory(tracer),
    });
    telemetryHooks(app, { tracer });
    app.get('/fhir/R4/Patient/:id', async () => ({ resourceType: 'Patient' }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      expect((await fetch(`${address}/fhir/R4/Patient/1?_elements=id`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await app.close();
    }
    const [span] = spans.getFinishedSpans();
    expect(span.name).toBe('GET /fhir/R4/Patient/:id');
    expect(span.attributes).toMatchObject({
      'hearth.interaction': 'read',
      'fhir.resource_type': 'Patient',
      'url.path': '/fhir/R4/Patient/1',
    });
    const line = lines.find((l) => l.msg === 'request');
    expect(line).toMatchObject({
      interaction: 'read',
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
    });
  });

  it('writes nothing below info', async () => {
    expect(await logLinesOf('warn', '/fhir/R4/Patient')).toEqual([]);
  });

  it('keeps a URL without a query as it is', () => {
    expect(urlWithoutQueryValues('/fhir/R4/Patient/1/_history')).toBe('/fhir/R4/Patient/1/_history');
    expect(urlWithoutQueryValues('/a?')).toBe('/a?');
    expect(urlWithoutQueryValues('/a?x=1&&y')).toBe('/a?x=&y');
  });
});
