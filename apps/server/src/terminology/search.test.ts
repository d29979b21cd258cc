import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

async function create(resource: object) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${(resource as { resourceType: string }).resourceType}`,
    headers: { 'content-type': FHIR, ...t.authHeaders },
    payload: JSON.stringify(resource),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function search(query: string): Promise<string[]> {
  const res = await t.app.inject({ url: `/fhir/R4/${query}`, headers: t.authHeaders });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().entry ?? []).map((e: { resource: { id: string } }) => e.resource.id);
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  for (const code of ['AE', 'CASH', 'DN']) {
    ids[code] = (
      await create({
        resourceType: 'Account',
        status: 'active',
        type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code }] },
      })
    ).id;
  }
  await create({
    resourceType: 'ValueSet',
    url: 'http://example.org/fhir/ValueSet/credit-cards',
    status: 'active',
    compose: {
      include: [
        {
          system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode',
          filter: [{ property: 'concept', op: 'descendent-of', value: 'CC' }],
        },
      ],
    },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('token :in and :not-in answered by terminology', () => {
  it('matches codes of an R4 value set and of a project value set, and excludes with :not-in', async () => {
    const all = await search('Account?type:in=http://terminology.hl7.org/ValueSet/v3-ActCode&_count=100');
    expect(all.sort()).toEqual([ids.AE, ids.CASH, ids.DN].sort());
    const cards = await search('Account?type:not-in=http://example.org/fhir/ValueSet/credit-cards');
    expect(cards).toEqual([ids.CASH]);
  });

  it('matches a hierarchy-filtered value set', async () => {
    const cards = await search('Account?type:in=http://example.org/fhir/ValueSet/credit-cards');
    expect(cards.sort()).toEqual([ids.AE, ids.DN].sort());
  });

  it('answers :below and :above through the code system hierarchy', async () => {
    const below = await search('Account?type:below=http://terminology.hl7.org/CodeSystem/v3-ActCode|CC');
    expect(below.sort()).toEqual([ids.AE, ids.DN].sort());
    const above = await search('Account?type:above=http://terminology.hl7.org/CodeSystem/v3-ActCode|AE');
    expect(above).toEqual([ids.AE]);
    const notBelow = await search('Account?type:below=http://terminology.hl7.org/CodeSystem/v3-ActCode|CASH');
    expect(notBelow).toEqual([ids.CASH]);
  });

  it('answers 400 for an unknown value set', async () => {
    const res = await t.app.inject({ url: '/fhir/R4/Account?type:in=http://example.org/none', headers: t.authHeaders });
    expect(res.statusCode).toBe(400);
    expect(res.json().issue[0].details.text).toContain('Unknown value set');
  });
});
