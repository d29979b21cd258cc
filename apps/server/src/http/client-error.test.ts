// Requests Node's HTTP parser refuses never reach Fastify: they too answer with an OperationOutcome.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { clientErrorOutcome } from './client-error.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ listen: true });
});
afterAll(async () => {
  await t?.close();
});

/** Sends raw bytes and reads the whole answer (the server closes the connection after it). */
function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: rest.join('\r\n\r\n') });
    });
  });
}

describe('requests the HTTP parser refuses', () => {
  it('a URL and headers over the limit: 431 with an OperationOutcome that says what to do', async () => {
    const answer = await raw(`GET /fhir/R4/Patient?name=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.headers).toContain('content-type: application/fhir+json');
    const outcome = JSON.parse(answer.body) as { resourceType: string; issue: { details: { text: string } }[] };
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue[0].details.text).toMatch(/larger than \d+ KB.*_search/);
  });

  it('a request that is not HTTP: 400 with an OperationOutcome', async () => {
    const answer = await raw('HELLO THERE\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code: 'invalid' }] });
  });

  it('a request that took too long: 408', () => {
    const err = Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    const { status, outcome } = clientErrorOutcome(err, 16_384);
    expect(status).toBe(408);
    expect(outcome.issue[0].code).toBe('timeout');
  });
});
