/** Encounter/$capture-charges against a real server: pricing, quantities, idempotence, warnings, errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject } from '../test/auth.js';
import { CAPTURE_IDENTIFIER, CPT } from './common.js';
import {
  billingFixture,
  cpt,
  feeFor,
  feeSchedule,
  operation,
  param,
  post,
  put,
  type BillingFixture,
  type Json,
} from './testing.js';

let t: TestApp;
let f: BillingFixture;

beforeAll(async () => {
  t = await createTestApp();
  await feeSchedule(t);
  f = await billingFixture(t);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const capture = (encounterId: string) => operation(t, `Encounter/${encounterId}/$capture-charges`);
const items = (body: Json) => param(body, 'chargeItem').map((p) => p.resource as Json);
const byCode = (body: Json, code: string) => items(body).find((c) => c.code.coding[0].code === code) as Json;

describe('Encounter/$capture-charges', () => {
  it('charges the visit and the completed procedures, one item per code, priced from the fee schedule', async () => {
    const res = await capture(f.encounter.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(param(res.body, 'created')[0].valueInteger).toBe(3);
    const visit = byCode(res.body, '99213');
    expect(visit.service).toBeUndefined();
    expect(visit).toMatchObject({
      status: 'billable',
      code: { coding: [{ system: CPT, code: '99213' }] },
      subject: { reference: `Patient/${f.patient.id}` },
      context: { reference: `Encounter/${f.encounter.id}` },
      quantity: { value: 1 },
      priceOverride: { value: 120, currency: 'USD' },
      definitionCanonical: ['http://example.org/fee-schedule/99213'],
      identifier: [{ system: CAPTURE_IDENTIFIER, value: `${CPT}|99213` }],
    });
    // Two venipunctures: quantity 2, priced 2 x 15.00; the CPT code chosen over the SNOMED one.
    const draws = byCode(res.body, '36415');
    expect(draws.quantity.value).toBe(2);
    expect(draws.priceOverride.value).toBe(30);
    expect(draws.service.map((s: Json) => s.reference).sort()).toEqual(
      [`Procedure/${f.procedures[0].id}`, `Procedure/${f.procedures[1].id}`].sort(),
    );
    // The ECG that was not done is not charged.
    expect(byCode(res.body, '93000')).toMatchObject({ quantity: { value: 1 }, priceOverride: { value: 45.5 } });
    expect(param(res.body, 'issues')).toEqual([]);
  });

  it('is idempotent: capturing again creates nothing and changes nothing', async () => {
    const before = await capture(f.encounter.id);
    const again = await capture(f.encounter.id);
    expect(param(again.body, 'created')[0].valueInteger).toBe(0);
    expect(param(again.body, 'updated')[0].valueInteger).toBe(0);
    expect(param(again.body, 'unchanged')[0].valueInteger).toBe(3);
    const versions = (b: Json) =>
      items(b)
        .map((c) => `${c.id}/${c.meta.versionId}`)
        .sort();
    expect(versions(again.body)).toEqual(versions(before.body));
    const search = await t.app.inject({
      url: `/fhir/R4/ChargeItem?context=Encounter/${f.encounter.id}&_summary=count`,
      headers: t.authHeaders,
    });
    expect(search.json().total).toBe(3);
  });

  it('follows the procedures: one more raises the quantity, one voided aborts its charge', async () => {
    const ecg = await post(t, { ...f.procedures[2], id: undefined, meta: undefined });
    let res = await capture(f.encounter.id);
    expect(param(res.body, 'updated')[0].valueInteger).toBe(1);
    expect(byCode(res.body, '93000')).toMatchObject({ quantity: { value: 2 }, priceOverride: { value: 91 } });
    await put(t, { ...ecg, status: 'entered-in-error' });
    await put(t, { ...f.procedures[2], status: 'entered-in-error' });
    res = await capture(f.encounter.id);
    expect(byCode(res.body, '93000').status).toBe('aborted');
    // Restored: the same ChargeItem is billable again.
    await put(t, { ...f.procedures[2], status: 'completed' });
    const restored = await capture(f.encounter.id);
    expect(byCode(restored.body, '93000')).toMatchObject({
      id: byCode(res.body, '93000').id,
      status: 'billable',
      quantity: { value: 1 },
    });
  });

  it('warns of codes the schedule does not price and services with no billable code', async () => {
    const g = await billingFixture(t, 'Unpriced');
    await post(t, {
      resourceType: 'Procedure',
      status: 'completed',
      code: cpt('99499', 'Unlisted evaluation and management service'),
      subject: { reference: `Patient/${g.patient.id}` },
      encounter: { reference: `Encounter/${g.encounter.id}` },
    });
    const local = await post(t, {
      resourceType: 'Procedure',
      status: 'completed',
      code: { coding: [{ system: 'http://example.org/local', code: 'X1' }] },
      subject: { reference: `Patient/${g.patient.id}` },
      encounter: { reference: `Encounter/${g.encounter.id}` },
    });
    const res = await capture(g.encounter.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const unpriced = byCode(res.body, '99499');
    expect(unpriced.priceOverride).toBeUndefined();
    const issues = param(res.body, 'issues')[0].resource.issue as Json[];
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: 'warning', details: { text: expect.stringContaining('99499') } }),
        expect.objectContaining({
          severity: 'warning',
          expression: [`Procedure/${local.id}.code`],
        }),
      ]),
    );
  });

  it('prices from price components, applicability and the effective period', async () => {
    // A schedule for 99214: last year's price is out of effect; surcharges, discounts and tax add up.
    await post(t, feeFor('99214', 500, { date: '2024-01-01', effectivePeriod: { end: '2024-12-31' } }));
    await post(
      t,
      feeFor('99214', 0, {
        date: '2025-01-01',
        effectivePeriod: { start: '2025-01-01' },
        propertyGroup: [
          {
            priceComponent: [
              { type: 'base', amount: { value: 200, currency: 'USD' } },
              { type: 'surcharge', amount: { value: 20, currency: 'USD' } },
              { type: 'discount', factor: 0.1 },
              { type: 'informational', amount: { value: 999, currency: 'USD' } },
            ],
          },
          {
            // Only for visits of more than one unit: never for this one.
            applicability: [{ language: 'text/fhirpath', expression: 'quantity.value > 1' }],
            priceComponent: [{ type: 'surcharge', amount: { value: 1000, currency: 'USD' } }],
          },
        ],
      }),
    );
    const g = await billingFixture(t, 'Priced');
    await put(t, { ...g.encounter, type: [cpt('99214', 'Office visit, level 4')] });
    const res = await capture(g.encounter.id);
    // 200 + 20 - 10% of 200 = 200.00
    expect(byCode(res.body, '99214').priceOverride).toEqual({ value: 200, currency: 'USD' });
  });

  it('answers 404 for an unknown encounter, 422 for an unknown parameter, 405 for GET', async () => {
    expect((await capture('no-such-encounter')).status).toBe(404);
    const bad = await operation(t, `Encounter/${f.encounter.id}/$capture-charges`, [
      { name: 'dryRun', valueString: 'true' },
    ]);
    expect(bad.status).toBe(422);
    expect(bad.body.issue[0].details.text).toContain('dryRun');
    const get = await operation(t, `Encounter/${f.encounter.id}/$capture-charges`, undefined, 'GET');
    expect(get.status).toBe(405);
  });

  it("does not reach another project's encounter", async () => {
    const other = await createTestProject(t.app, t.services);
    const res = await operation(t, `Encounter/${f.encounter.id}/$capture-charges`, undefined, 'POST', other.headers);
    expect(res.status).toBe(404);
  });
});
