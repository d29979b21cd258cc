/**
 * The SDK's operation helpers against a real server: ValueSet/$expand, a bot made with createBot
 * and run with executeBot (by id and by identifier), $validate, $graphql, ConceptMap translate and
 * FHIRcast publishing with the current context.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationOutcomeError } from '@hearth/core';
import type { HearthClient } from '@hearth/core';
import type { TestApp } from '../app.js';
import { serverWithSignedInAdmin } from './server.test-util.js';

let t: TestApp;
let hearth: HearthClient;

beforeAll(async () => {
  ({ t, hearth } = await serverWithSignedInAdmin());
});
afterAll(async () => {
  await t?.close();
});

describe('HearthClient operations against a server', () => {
  it('expands a value set', async () => {
    const expansion = await hearth.valueSetExpand({
      url: 'http://hl7.org/fhir/ValueSet/administrative-gender',
      count: 10,
    });
    const codes = expansion.expansion?.contains?.map((c) => c.code).sort();
    expect(codes).toEqual(['female', 'male', 'other', 'unknown']);
    const filtered = await hearth.valueSetExpand({
      url: 'http://hl7.org/fhir/ValueSet/administrative-gender',
      filter: 'fem',
    });
    expect(filtered.expansion?.contains?.map((c) => c.code)).toEqual(['female']);
  });

  it('creates a bot with createBot, deploys it, and executes it by id and by identifier', async () => {
    const projectId = hearth.getProject()?.reference?.split('/')[1] as string;
    const created = await hearth.createBot(projectId, { name: 'sdk echo', description: 'echoes its input' });
    expect(created.resourceType).toBe('Bot');
    const bot = await hearth.updateResource({
      ...created,
      identifier: [{ system: 'https://sdk.test/bots', value: 'echo' }],
    });
    const code = `export async function handler(_client, event) {
      return typeof event.input === 'string' ? event.input.toUpperCase() : { echo: event.input, contentType: event.contentType };
    }`;
    await hearth.post(
      hearth.fhirUrl('Bot', bot.id as string, '$deploy'),
      { code, filename: 'index.js' },
      'application/json',
    );
    expect(await hearth.executeBot(bot.id as string, { n: 1 })).toEqual({
      echo: { n: 1 },
      contentType: 'application/json',
    });
    expect(await hearth.executeBot({ system: 'https://sdk.test/bots', value: 'echo' }, 'hello', 'text/plain')).toBe(
      'HELLO',
    );
    const admin = await hearth.getProjectAdmin<{ bots: { id: string }[] }>(projectId);
    expect(admin.bots.map((b) => b.id)).toContain(bot.id);
  });

  it('validates a resource on the server', async () => {
    const valid = await hearth.validateResource({ resourceType: 'Patient', gender: 'male' });
    expect(valid.resourceType).toBe('OperationOutcome');
    expect(valid.issue.filter((i) => i.severity === 'error')).toEqual([]);
    // $validate answers 200 with the problems as issues when the resource is invalid.
    const invalid = await hearth.validateResource({ resourceType: 'Patient', gender: 'nope' });
    const errors = invalid.issue.filter((i) => i.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(errors)).toMatch(/gender/);
    const noType = await hearth.validateResource({} as never).catch((e: unknown) => e);
    expect((noType as OperationOutcomeError).status).toBe(400);
  });

  it('runs a GraphQL query', async () => {
    const p = await hearth.createResource({ resourceType: 'Patient', name: [{ family: 'GraphQL' }] });
    const answer = await hearth.graphql<{ Patient: { id: string; name: { family: string }[] } }>(
      `{ Patient(id: "${p.id}") { id name { family } } }`,
    );
    expect(answer.data?.Patient).toEqual({ id: p.id, name: [{ family: 'GraphQL' }] });
    // A query the schema refuses is answered (200) with GraphQL errors, as GraphQL does.
    const failed = await hearth.graphql('{ NoSuchType { id } }');
    expect(failed.data).toBeUndefined();
    expect(failed.errors?.[0].message).toMatch(/NoSuchType/);
  });

  it('translates a code with a ConceptMap, by url and by id, typed', async () => {
    const map = await hearth.createResource({
      resourceType: 'ConceptMap',
      url: 'https://sdk.test/ConceptMap/gender',
      status: 'active',
      group: [
        {
          source: 'https://sdk.test/local-gender',
          target: 'http://hl7.org/fhir/administrative-gender',
          element: [
            { code: 'F', target: [{ code: 'female', display: 'Female', equivalence: 'equivalent' }] },
            { code: 'M', target: [{ code: 'male', equivalence: 'equivalent' }] },
          ],
        },
      ],
    });
    const byUrl = await hearth.translate({
      url: 'https://sdk.test/ConceptMap/gender',
      system: 'https://sdk.test/local-gender',
      code: 'F',
    });
    expect(byUrl.result).toBe(true);
    expect(byUrl.match).toEqual([
      expect.objectContaining({
        equivalence: 'equivalent',
        concept: expect.objectContaining({ system: 'http://hl7.org/fhir/administrative-gender', code: 'female' }),
      }),
    ]);
    const byId = await hearth.translate({
      id: map.id,
      coding: { system: 'https://sdk.test/local-gender', code: 'M' },
    });
    expect(byId.match.map((m) => m.concept?.code)).toEqual(['male']);
    const none = await hearth.translate({ id: map.id, system: 'https://sdk.test/local-gender', code: 'X' });
    expect(none.result).toBe(false);
    expect(none.match).toEqual([]);
    await expect(hearth.translate({ id: map.id })).rejects.toMatchObject({
      outcome: { issue: [{ severity: 'error' }] },
    });
  });

  it("publishes FHIRcast events on the user's topic and reads the current context", async () => {
    const topic = hearth.getFhircastTopic();
    expect(topic).toMatch(/^[\w-]{20,}$/);
    const sent = await hearth.fhircastPublish('Patient-open', [
      { key: 'patient', resource: { resourceType: 'Patient', id: 'sdk-1' } },
    ]);
    expect(sent.event['hub.topic']).toBe(topic);
    const current = await hearth.fhircastGetContext();
    expect(current['context.type']).toBe('Patient');
    expect(current.context).toEqual([{ key: 'patient', resource: { resourceType: 'Patient', id: 'sdk-1' } }]);
    await hearth.fhircastPublish('Patient-close', [
      { key: 'patient', resource: { resourceType: 'Patient', id: 'sdk-1' } },
    ]);
    expect(await hearth.fhircastGetContext()).toEqual({ 'context.type': '', context: [] });
    await expect(hearth.fhircastPublish('Patient-open', [])).rejects.toMatchObject({
      outcome: { issue: [{ expression: ['event.context'] }] },
    });
  });
});
