import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { operationDefinition } from '../operations/definitions/build.js';
import { createBot, deploy, waitFor } from '../bots/testing.js';

let t: TestApp;
let release: () => void = () => undefined;

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  const { asyncJobs } = t.services.automation;
  // A kind of long work for the test: reports progress, then waits until the test lets it finish.
  asyncJobs.define<{ n: number }>('test-progress', async (params, job) => {
    await job.progress(0.5, 'half way');
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    if (await job.cancelled()) {
      return undefined;
    }
    return { resourceType: 'Parameters', parameter: [{ name: 'doubled', valueInteger: params.n * 2 }] };
  });
  t.services.operations.register({
    definition: operationDefinition({
      id: 'test-async',
      url: 'https://example.org/OperationDefinition/test-async',
      name: 'TestAsync',
      title: 'Long work for the test',
      code: 'test-async',
      description: 'Starts the test-progress job.',
      levels: { system: true },
      affectsState: true,
      parameter: [],
    }),
    handler: (input) => asyncJobs.start(input, 'test-progress', { n: 21 }, 'batch'),
  });
});
afterAll(async () => {
  release();
  await t?.close();
});

async function call(
  method: string,
  url: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> | undefined }> {
  const res = await fetch(url.startsWith('http') ? url : new URL(url, t.baseUrl), {
    method,
    headers: { ...t.authHeaders, ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}

describe('asynchronous requests (Prefer: respond-async)', () => {
  it('answers 202 with Content-Location, reports progress while running, then the output', async () => {
    const kick = await call('POST', 'fhir/R4/$test-async', { body: {}, headers: { prefer: 'respond-async' } });
    expect(kick.status).toBe(202);
    const location = kick.headers.get('content-location') as string;
    expect(location).toMatch(/\/fhir\/R4\/job\/[\w-]+\/status$/);
    expect(kick.body).toMatchObject({ resourceType: 'AsyncJob', status: 'accepted', type: 'batch' });

    const running = await waitFor(async () => {
      const poll = await call('GET', location);
      return poll.headers.get('x-progress')?.startsWith('50%') ? poll : undefined;
    });
    expect(running.status).toBe(202);
    expect(running.headers.get('x-progress')).toBe('50% half way');
    expect(running.body).toMatchObject({ status: 'active' });

    release();
    const done = await waitFor(async () => {
      const poll = await call('GET', location);
      return poll.status === 200 ? poll : undefined;
    });
    expect(done.body).toMatchObject({
      resourceType: 'AsyncJob',
      status: 'completed',
      output: { resourceType: 'Parameters', parameter: [{ name: 'doubled', valueInteger: 42 }] },
    });
    expect(done.body?.transactionTime).toBeTruthy();
    // The AsyncJob is a resource like any other.
    const id = location.split('/').at(-2) as string;
    expect((await call('GET', `fhir/R4/AsyncJob/${id}`)).body).toMatchObject({ status: 'completed' });
  });

  it('cancels a job with DELETE on its status URL', async () => {
    const kick = await call('POST', 'fhir/R4/$test-async', { body: {}, headers: { prefer: 'respond-async' } });
    const location = kick.headers.get('content-location') as string;
    await waitFor(async () =>
      (await call('GET', location)).headers.get('x-progress')?.startsWith('50%') ? true : undefined,
    );
    expect((await call('DELETE', location)).status).toBe(202);
    release();
    expect((await call('GET', location)).status).toBe(404);
    const id = location.split('/').at(-2) as string;
    await new Promise((r) => setTimeout(r, 300));
    const job = (await call('GET', `fhir/R4/AsyncJob/${id}`)).body as Resource & { status?: string; output?: unknown };
    expect(job.status).toBe('cancelled');
    expect(job.output).toBeUndefined();
  });

  it('runs Bot $execute as a job, with the bot result as output', async () => {
    const bot = await createBot(t);
    await deploy(
      t,
      bot.id,
      'export async function handler(client, event) { return { sum: event.input.a + event.input.b }; }',
      'sum.js',
    );
    const kick = await call('POST', `fhir/R4/Bot/${bot.id}/$execute`, {
      body: { a: 2, b: 3 },
      headers: { prefer: 'respond-async' },
    });
    expect(kick.status).toBe(202);
    const location = kick.headers.get('content-location') as string;
    const done = await waitFor(async () => {
      const poll = await call('GET', location);
      return poll.status === 200 ? poll : undefined;
    });
    expect(done.body).toMatchObject({
      status: 'completed',
      output: { parameter: [{ name: 'responseBody', valueString: '{"sum":5}' }] },
    });
  });

  it('reports a failed job with its OperationOutcome', async () => {
    const bot = await createBot(t);
    await deploy(t, bot.id, "export async function handler() { throw new Error('no can do'); }", 'fail.js');
    const kick = await call('POST', `fhir/R4/Bot/${bot.id}/$execute`, {
      body: {},
      headers: { prefer: 'respond-async' },
    });
    const location = kick.headers.get('content-location') as string;
    const failed = await waitFor(async () => {
      const poll = await call('GET', location);
      return poll.status >= 400 ? poll : undefined;
    });
    // The same status a synchronous $execute of a throwing bot answers.
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ resourceType: 'OperationOutcome' });
    expect(JSON.stringify(failed.body)).toContain('no can do');
  });

  it('answers 404 for an unknown job', async () => {
    expect((await call('GET', 'fhir/R4/job/00000000-0000-0000-0000-000000000000/status')).status).toBe(404);
  });
});
