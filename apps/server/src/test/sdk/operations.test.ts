/**
 * The SDK's operation helpers against a real server: ValueSet/$expand, Bot/$execute (by id and
 * by identifier), $validate and $graphql. An operation the server does not have yet is skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthClient, MemoryStorage, OperationOutcomeError, type Bot } from '@hearth/core';
import { createTestApp, type TestApp } from '../app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, authConfig, hasSignIn } from './server.test-util.js';

let t: TestApp;
let hearth: HearthClient;

beforeAll(async () => {
  t = await createTestApp({ listen: true, config: authConfig() });
  hearth = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
  if (await hasSignIn(t.baseUrl)) {
    await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  }
});
afterAll(async () => {
  await t?.close();
});

/** True for the answer of a server without the operation. */
function isMissingOperation(err: unknown): boolean {
  return (
    err instanceof OperationOutcomeError &&
    (err.status === 404 || err.status === 405) &&
    /operation|route/i.test(err.message)
  );
}

describe('HearthClient operations against a server', () => {
  it('expands a value set', async (ctx) => {
    const expansion = await hearth
      .valueSetExpand({ url: 'http://hl7.org/fhir/ValueSet/administrative-gender', count: 10 })
      .catch((err: unknown) => (isMissingOperation(err) ? undefined : Promise.reject(err)));
    if (!expansion) {
      ctx.skip();
    }
    const codes = expansion?.expansion?.contains?.map((c) => c.code).sort();
    expect(codes).toEqual(['female', 'male', 'other', 'unknown']);
  });

  it('executes a bot by id and by identifier', async (ctx) => {
    const projectId = t.services.superAdminProjectId;
    const bot = await hearth.createResource<Bot>({
      resourceType: 'Bot',
      name: 'sdk echo',
      identifier: [{ system: 'https://sdk.test/bots', value: 'echo' }],
    });
    await hearth.createResource({
      resourceType: 'ProjectMembership',
      project: { reference: `Project/${projectId}` },
      user: { reference: `Bot/${bot.id}` },
      profile: { reference: `Bot/${bot.id}` },
    });
    const code = `export async function handler(_client, event) {
      return typeof event.input === 'string' ? event.input.toUpperCase() : { echo: event.input, contentType: event.contentType };
    }`;
    try {
      await hearth.post(
        hearth.fhirUrl('Bot', bot.id as string, '$deploy'),
        { code, filename: 'index.js' },
        'application/json',
      );
    } catch (err) {
      if (isMissingOperation(err)) {
        ctx.skip();
      }
      throw err;
    }
    expect(await hearth.executeBot(bot.id as string, { n: 1 })).toEqual({
      echo: { n: 1 },
      contentType: 'application/json',
    });
    expect(await hearth.executeBot({ system: 'https://sdk.test/bots', value: 'echo' }, 'hello', 'text/plain')).toBe(
      'HELLO',
    );
  });

  it('validates a resource on the server', async (ctx) => {
    const valid = await hearth
      .validateResource({ resourceType: 'Patient', gender: 'male' })
      .catch((err: unknown) => (isMissingOperation(err) ? undefined : Promise.reject(err)));
    if (!valid) {
      ctx.skip();
    }
    expect(valid?.resourceType).toBe('OperationOutcome');
    expect(valid?.issue.filter((i) => i.severity === 'error')).toEqual([]);
    // $validate answers 200 with the problems as issues when the resource is invalid.
    const invalid = await hearth.validateResource({ resourceType: 'Patient', gender: 'nope' });
    const errors = invalid.issue.filter((i) => i.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors)).toMatch(/gender/);
  });

  it('runs a GraphQL query', async (ctx) => {
    const p = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'GraphQL' }] });
    const answer = await hearth
      .graphql<{ Patient: { id: string } }>(`{ Patient(id: "${p.id}") { id } }`)
      .catch((err: unknown) => (isMissingOperation(err) ? undefined : Promise.reject(err)));
    if (!answer) {
      ctx.skip();
    }
    expect(answer?.data?.Patient.id).toBe(p.id);
  });
});
