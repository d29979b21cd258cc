import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createBot, deploy, FHIR_JSON, get, post, testProjectId, waitFor } from './testing.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ listen: true });
  const repo = t.services.systemRepo(testProjectId(t));
  const project = (await repo.readResource('Project', testProjectId(t))).resource;
  await repo.updateResource({ ...project, secret: [{ name: 'API_KEY', valueString: 'k-123' }] });
});
afterAll(async () => {
  await t?.close();
});

const ECHO_BOT = `
import type { Resource } from '@hearth/core';
interface Event { input: unknown; contentType: string; secrets: Record<string, { valueString?: string }>; bot: { reference: string } }
export async function handler(_client: unknown, event: Event): Promise<unknown> {
  const input: any = event.input;
  console.log('content type', event.contentType);
  if (event.contentType.startsWith('x-application/hl7-v2+er7')) {
    const control = String(input).split('\\r')[0].split('|')[9];
    return 'MSH|^~\\\\&|HEARTH|HEARTH|||20240101||ACK|' + control + '|P|2.5\\rMSA|AA|' + control;
  }
  if (event.contentType.startsWith('text/plain')) {
    return String(input).toUpperCase();
  }
  if (input && (input as Resource).resourceType === 'Patient') {
    return { ...(input as object), active: true };
  }
  return { echo: input, contentType: event.contentType, secret: event.secrets.API_KEY?.valueString, bot: event.bot.reference };
}
`;

describe('Bot $deploy and $execute', () => {
  let bot: Resource & { id: string };

  beforeAll(async () => {
    bot = await createBot(t, { identifier: [{ system: 'https://example.org/bots', value: 'echo' }] });
    await deploy(t, bot.id, ECHO_BOT, 'echo.ts');
  });

  it('compiles TypeScript on $deploy and stores the result as a Binary attachment', async () => {
    const stored = (await get(t, `fhir/R4/Bot/${bot.id}`)).json() as {
      executableCode?: { url: string; contentType: string };
    };
    expect(stored.executableCode?.contentType).toBe('application/javascript');
    // Stored as Binary/{id}; answered as a signed, expiring download URL that needs no Authorization header.
    const url = stored.executableCode?.url ?? '';
    expect(url).toMatch(/\/storage\/[0-9a-f-]+\?exp=\d+&sig=/);
    const binary = await fetch(url);
    expect(binary.status).toBe(200);
    const js = await binary.text();
    expect(js).toMatch(/export\s*\{\s*handler\s*\}/);
    expect(js).not.toContain('interface Event');
  });

  it('runs with GET query parameters as input', async () => {
    const res = await get(t, `fhir/R4/Bot/${bot.id}/$execute?name=Ada&tag=a&tag=b`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json()).toEqual({
      echo: { name: 'Ada', tag: ['a', 'b'] },
      contentType: 'application/x-www-form-urlencoded',
      secret: 'k-123',
      bot: `Bot/${bot.id}`,
    });
  });

  it('runs with a JSON body', async () => {
    const res = await post(t, `fhir/R4/Bot/${bot.id}/$execute`, { a: 1, b: [true] });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ echo: { a: 1, b: [true] }, contentType: 'application/json' });
  });

  it('runs with a FHIR resource and answers FHIR JSON', async () => {
    const res = await post(
      t,
      `fhir/R4/Bot/${bot.id}/$execute`,
      { resourceType: 'Patient', name: [{ family: 'X' }] },
      FHIR_JSON,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/fhir+json');
    expect(res.json()).toEqual({ resourceType: 'Patient', name: [{ family: 'X' }], active: true });
  });

  it('runs with an HL7 v2 message as text and answers HL7 v2', async () => {
    const msg = 'MSH|^~\\&|LAB|HOSP|||20240101120000||ORU^R01|MSG00042|P|2.5\rPID|1||123';
    const res = await post(t, `fhir/R4/Bot/${bot.id}/$execute`, msg, 'x-application/hl7-v2+er7');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('x-application/hl7-v2+er7');
    expect(res.text).toBe('MSH|^~\\&|HEARTH|HEARTH|||20240101||ACK|MSG00042|P|2.5\rMSA|AA|MSG00042');
  });

  it('runs with plain text and answers text', async () => {
    const res = await post(t, `fhir/R4/Bot/${bot.id}/$execute`, 'hello', 'text/plain');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.text).toBe('HELLO');
  });

  it('runs with any other content type (the body as base64)', async () => {
    const res = await post(
      t,
      `fhir/R4/Bot/${bot.id}/$execute`,
      Buffer.from([1, 2, 3, 250]),
      'application/octet-stream',
    );
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      echo: Buffer.from([1, 2, 3, 250]).toString('base64'),
      contentType: 'application/octet-stream',
    });
  });

  it('finds the bot by identifier: Bot/$execute?identifier=system|value', async () => {
    const res = await post(
      t,
      `fhir/R4/Bot/$execute?identifier=${encodeURIComponent('https://example.org/bots|echo')}`,
      { x: 1 },
    );
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ echo: { x: 1 } });
  });

  it('hands the bot the BotEvent { bot, contentType, input, secrets, traceId }', async () => {
    const inspector = await createBot(t, { name: 'inspector' });
    await deploy(
      t,
      inspector.id,
      `export async function handler(_client, event) {
        return { keys: Object.keys(event).sort(), bot: event.bot, contentType: event.contentType, input: event.input,
          secret: event.secrets.API_KEY, traceId: event.traceId, requester: event.requester };
      }`,
      'inspector.js',
    );
    const res = await fetch(new URL(`fhir/R4/Bot/${inspector.id}/$execute`, t.baseUrl), {
      method: 'POST',
      headers: { ...t.authHeaders, 'content-type': 'application/json', 'x-trace-id': 'trace-abc.123' },
      body: JSON.stringify({ n: 1 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-trace-id')).toBe('trace-abc.123');
    const out = (await res.json()) as Record<string, unknown>;
    expect(out).toMatchObject({
      keys: ['bot', 'contentType', 'input', 'requester', 'secrets', 'traceId'],
      bot: { reference: `Bot/${inspector.id}`, display: 'inspector' },
      contentType: 'application/json',
      input: { n: 1 },
      secret: { name: 'API_KEY', valueString: 'k-123' },
      traceId: 'trace-abc.123',
    });
    expect((out.requester as { reference?: string }).reference).toMatch(/^(Practitioner|Patient|ClientApplication)\//);
    // Without a trace id from the caller, the run gets one and answers it.
    const plain = await post(t, `fhir/R4/Bot/${inspector.id}/$execute`, {});
    const generated = plain.headers.get('x-trace-id');
    expect(generated).toBeTruthy();
    expect((plain.json() as { traceId: string }).traceId).toBe(generated);
  });

  it('answers a text result in the text type the caller accepts', async () => {
    const html = await fetch(new URL(`fhir/R4/Bot/${bot.id}/$execute`, t.baseUrl), {
      method: 'POST',
      headers: { ...t.authHeaders, 'content-type': 'text/plain', accept: 'text/html' },
      body: 'shout',
    });
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await html.text()).toBe('SHOUT');
    // An HL7 v2 interface engine asks for HL7 v2 back.
    const msg = 'MSH|^~\\&|LAB|HOSP|||20240101120000||ORU^R01|MSG7|P|2.5';
    const ack = await fetch(new URL(`fhir/R4/Bot/${bot.id}/$execute`, t.baseUrl), {
      method: 'POST',
      headers: { ...t.authHeaders, 'content-type': 'x-application/hl7-v2+er7', accept: 'x-application/hl7-v2+er7' },
      body: msg,
    });
    expect(ack.status).toBe(200);
    expect(ack.headers.get('content-type')).toBe('x-application/hl7-v2+er7');
    expect(await ack.text()).toContain('MSA|AA|MSG7');
  });

  it('records a failed run as an AuditEvent with outcome 4, its output and the error', async () => {
    const failing = await createBot(t);
    await deploy(
      t,
      failing.id,
      `export async function handler() { console.log('about to fail'); console.error('oops'); throw new Error('kaboom'); }`,
      'failing.js',
    );
    const res = await post(t, `fhir/R4/Bot/${failing.id}/$execute`, {});
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ resourceType: 'OperationOutcome' });
    const traceId = res.headers.get('x-trace-id') as string;
    const audit = await waitFor(async () => {
      const rows = await t.pool.query<{ content: string }>(
        `SELECT content FROM "AuditEvent" WHERE NOT deleted AND content LIKE $1`,
        [`%${traceId}%`],
      );
      return rows.rows[0] ? (JSON.parse(rows.rows[0].content) as Resource & Record<string, unknown>) : undefined;
    });
    expect(audit.outcome).toBe('4');
    expect(audit.outcomeDesc).toContain('about to fail');
    expect(audit.outcomeDesc).toContain('[error] oops');
    expect(audit.outcomeDesc).toContain('kaboom');
  });

  it('records each run as an AuditEvent with the console output', async () => {
    const res = await post(t, `fhir/R4/Bot/${bot.id}/$execute`, 'audit me', 'text/plain');
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toBeTruthy();
    // AuditEvents are written in batches a few milliseconds after the run.
    await waitFor(async () => {
      const found = await t.pool.query(`SELECT 1 FROM "AuditEvent" WHERE NOT deleted AND content LIKE $1`, [
        `%${traceId}%`,
      ]);
      return found.rowCount ? true : undefined;
    });
    const rows = await t.pool.query<{ content: string }>(`SELECT content FROM "AuditEvent" WHERE NOT deleted`);
    const events = rows.rows.map(
      (r) =>
        JSON.parse(r.content) as Resource & {
          outcome?: string;
          outcomeDesc?: string;
          extension?: { valueString?: string }[];
          entity?: { what?: { reference?: string } }[];
          agent?: { who?: { reference?: string } }[];
        },
    );
    const mine = events.find((e) => e.extension?.[0]?.valueString === traceId);
    expect(mine).toBeDefined();
    expect(mine?.outcome).toBe('0');
    expect(mine?.outcomeDesc).toContain('content type text/plain');
    expect(mine?.entity?.[0]?.what?.reference).toBe(`Bot/${bot.id}`);
    expect(mine?.agent?.[0]?.who?.reference).toBe(`Bot/${bot.id}`);
  });

  it('deploys from the sourceCode attachment when no code is given', async () => {
    const source = `export async function handler(): Promise<string> { const n: number = 41; return String(n + 1); }`;
    const other = await createBot(t, {
      sourceCode: { contentType: 'text/typescript', title: 'index.ts', data: Buffer.from(source).toString('base64') },
    });
    const res = await post(t, `fhir/R4/Bot/${other.id}/$deploy`, {});
    expect(res.status).toBe(200);
    const run = await get(t, `fhir/R4/Bot/${other.id}/$execute`);
    expect(run.text).toBe('42');
  });

  it('gives the bot a client acting as the bot: it creates and reads resources', async () => {
    const worker = await createBot(t);
    await deploy(
      t,
      worker.id,
      `export async function handler(client, event) {
        const p = await client.createResource({ resourceType: 'Patient', name: [{ family: event.input.family }] });
        const again = await client.readResource('Patient', p.id);
        const ref = await client.readReference({ reference: 'Patient/' + p.id });
        await client.updateResource({ ...again, active: true });
        const patched = await client.patchResource('Patient', p.id, [{ op: 'add', path: '/gender', value: 'female' }]);
        let missing;
        try { await client.readResource('Patient', '00000000-0000-0000-0000-000000000000'); } catch (e) { missing = e.message; }
        return { id: p.id, author: p.meta.author, same: ref.id === p.id, version: patched.meta.versionId, gender: patched.gender, missing };
      }`,
      'worker.js',
    );
    const res = await post(t, `fhir/R4/Bot/${worker.id}/$execute`, { family: 'Lovelace' });
    expect(res.status).toBe(200);
    const out = res.json() as Record<string, unknown>;
    expect(out).toMatchObject({
      same: true,
      version: '3',
      gender: 'female',
      author: { reference: `Bot/${worker.id}` },
    });
    expect(String(out.missing)).toContain('not found');
    const stored = (await get(t, `fhir/R4/Patient/${out.id as string}`)).json() as Resource;
    expect(stored.meta?.author?.reference).toBe(`Bot/${worker.id}`);
  });

  it("acts as the bot's own membership: its access policy applies", async () => {
    const policy = await post(
      t,
      'fhir/R4/AccessPolicy',
      {
        resourceType: 'AccessPolicy',
        name: 'patients read-only',
        resource: [{ resourceType: 'Patient', readonly: true }],
      },
      FHIR_JSON,
    );
    expect(policy.status).toBe(201);
    const limited = await createBot(t, {}, `AccessPolicy/${(policy.json() as Resource).id}`);
    await deploy(
      t,
      limited.id,
      `export async function handler(client) {
        const out = {};
        try { out.search = (await client.searchResources('Patient', '_count=1')).length >= 0; } catch (e) { out.search = e.message; }
        try { await client.createResource({ resourceType: 'Patient' }); out.createPatient = 'created'; } catch (e) { out.createPatient = e.message; }
        try { await client.createResource({ resourceType: 'Observation', status: 'final', code: { text: 'x' } }); out.createObservation = 'created'; } catch (e) { out.createObservation = e.message; }
        return out;
      }`,
      'limited.js',
    );
    const res = await post(t, `fhir/R4/Bot/${limited.id}/$execute`, {});
    expect(res.status).toBe(200);
    const out = res.json() as Record<string, unknown>;
    expect(out.search).toBe(true);
    expect(out.createPatient).not.toBe('created');
    expect(out.createObservation).not.toBe('created');
  });

  it('answers 400 with the error for a bot that throws, and for one never deployed', async () => {
    const thrower = await createBot(t);
    await deploy(t, thrower.id, `export async function handler() { throw new Error('bad input here'); }`, 'x.js');
    const res = await post(t, `fhir/R4/Bot/${thrower.id}/$execute`, {});
    expect(res.status).toBe(400);
    expect(res.text).toContain('bad input here');

    const never = await createBot(t);
    const res2 = await post(t, `fhir/R4/Bot/${never.id}/$execute`, {});
    expect(res2.status).toBe(400);
    expect(res2.text).toContain('$deploy');
  });

  it('rejects code that does not compile on $deploy', async () => {
    const b = await createBot(t);
    const res = await post(t, `fhir/R4/Bot/${b.id}/$deploy`, {
      code: 'export async function handler( {',
      filename: 'x.ts',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('does not compile');
  });
});
