/**
 * A claim's life against a real server: $build-claim from an encounter, $validate-claim with each
 * problem located, $submit (refused while invalid), $record-response and $balance, and the
 * CMS-1500 style PDF read back as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractText, getDocumentProxy } from 'unpdf';
import { createTestApp, type TestApp } from '../test/app.js';
import { BILLING_TASK_SYSTEM, CPT, ICD10CM } from './common.js';
import { SUBMISSION_CODE } from './claim-submit.js';
import { billingFixture, feeSchedule, operation, param, put, read, type BillingFixture, type Json } from './testing.js';

let t: TestApp;
let f: BillingFixture;
let claim: Json;

beforeAll(async () => {
  t = await createTestApp();
  await feeSchedule(t);
  f = await billingFixture(t);
  const captured = await operation(t, `Encounter/${f.encounter.id}/$capture-charges`);
  expect(captured.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const money = (json: Json, name: string) => param(json, name)[0]?.valueMoney?.value as number;

async function pdfText(bytes: Buffer): Promise<string> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(pdf, { mergePages: true });
  return text;
}

describe('Encounter/$build-claim', () => {
  it('builds a draft claim: patient, provider, insurer, coverage, diagnoses, priced items and total', async () => {
    const res = await operation(t, `Encounter/${f.encounter.id}/$build-claim`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    claim = res.body;
    expect(claim).toMatchObject({
      resourceType: 'Claim',
      status: 'draft',
      use: 'claim',
      type: { coding: [{ code: 'professional' }] },
      patient: { reference: `Patient/${f.patient.id}` },
      provider: { reference: `Organization/${f.clinic.id}` },
      insurer: { reference: `Organization/${f.payer.id}` },
      insurance: [{ sequence: 1, focal: true, coverage: { reference: `Coverage/${f.coverage.id}` } }],
      careTeam: [{ provider: { reference: `Practitioner/${f.doctor.id}` } }],
      diagnosis: [
        { sequence: 1, diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'I10' }] } },
        { sequence: 2, diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'E11.9' }] } },
      ],
      total: { value: 195.5, currency: 'USD' },
    });
    const lines = (claim.item as Json[]).map((i) => [
      i.productOrService.coding[0].code,
      i.quantity.value,
      i.unitPrice.value,
      i.net.value,
      i.diagnosisSequence,
      i.servicedDate,
    ]);
    expect(lines).toEqual(
      expect.arrayContaining([
        ['99213', 1, 120, 120, [1, 2], '2025-03-14'],
        ['36415', 2, 15, 30, [1, 2], '2025-03-14'],
        ['93000', 1, 45.5, 45.5, [1, 2], '2025-03-14'],
      ]),
    );
  });

  it('building again replaces the draft rather than adding a second claim', async () => {
    const again = await operation(t, `Encounter/${f.encounter.id}/$build-claim`);
    expect(again.body.id).toBe(claim.id);
    const count = await t.app.inject({
      url: `/fhir/R4/Claim?encounter=Encounter/${f.encounter.id}&_summary=count`,
      headers: t.authHeaders,
    });
    expect(count.json().total).toBe(1);
    claim = again.body;
  });

  it('answers 422 without coverage, without charges, and for a coverage of another patient', async () => {
    const g = await billingFixture(t, 'Uninsured');
    const noCharges = await operation(t, `Encounter/${g.encounter.id}/$build-claim`);
    expect(noCharges.status).toBe(422);
    expect(noCharges.body.issue[0].details.text).toContain('$capture-charges');
    await put(t, { ...g.coverage, status: 'cancelled' });
    await operation(t, `Encounter/${g.encounter.id}/$capture-charges`);
    const uninsured = await operation(t, `Encounter/${g.encounter.id}/$build-claim`);
    expect(uninsured.status).toBe(422);
    expect(uninsured.body.issue[0].expression).toEqual(['coverage']);
    const wrong = await operation(t, `Encounter/${g.encounter.id}/$build-claim`, [
      { name: 'coverage', valueReference: { reference: `Coverage/${f.coverage.id}` } },
    ]);
    expect(wrong.status).toBe(422);
    expect(wrong.body.issue[0].details.text).toContain('does not cover');
  });
});

describe('Claim/$validate-claim and $submit', () => {
  it('a complete claim is valid', async () => {
    const res = await operation(t, `Claim/${claim.id}/$validate-claim`, undefined, 'GET');
    expect(res.status).toBe(200);
    expect(res.body.issue).toEqual([expect.objectContaining({ severity: 'information' })]);
  });

  it('lists each problem with its location, and $submit refuses the claim with 422', async () => {
    const broken = {
      ...claim,
      diagnosis: undefined,
      total: { value: 999, currency: 'USD' },
      billablePeriod: { start: '2026-02-01' },
      item: [
        { ...claim.item[0], net: { value: 1, currency: 'USD' } },
        { ...claim.item[1], unitPrice: undefined },
        { ...claim.item[2], servicedDate: '2026-02-01' },
      ],
    };
    await put(t, broken);
    const res = await operation(t, `Claim/${claim.id}/$validate-claim`, undefined, 'GET');
    const where = (res.body.issue as Json[]).filter((i) => i.severity === 'error').map((i) => i.expression[0]);
    expect(where).toEqual(
      expect.arrayContaining([
        'Claim.diagnosis',
        'Claim.item[0].net',
        'Claim.item[1].unitPrice',
        'Claim.item[0].diagnosisSequence[0]',
        'Claim.total',
        'Claim.insurance[0].coverage',
      ]),
    );
    const coverageIssue = (res.body.issue as Json[]).find((i) => i.expression[0] === 'Claim.insurance[0].coverage');
    expect(coverageIssue?.details.text).toContain('2026-02-01');
    const submit = await operation(t, `Claim/${claim.id}/$submit`);
    expect(submit.status).toBe(422);
    expect(submit.body.issue.length).toBeGreaterThanOrEqual(5);
    expect((await read(t, `Claim/${claim.id}`)).status).toBe('draft');
    await put(t, { ...claim, meta: undefined });
  });

  it('submits a valid claim: active, charges billed, a submission Task; a second submit is a 409', async () => {
    const res = await operation(t, `Claim/${claim.id}/$submit`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(param(res.body, 'claim')[0].resource.status).toBe('active');
    const task = param(res.body, 'submission')[0].resource;
    expect(task).toMatchObject({
      status: 'requested',
      code: { coding: [{ system: BILLING_TASK_SYSTEM, code: SUBMISSION_CODE }] },
      focus: { reference: `Claim/${claim.id}` },
      owner: { reference: `Organization/${f.payer.id}` },
    });
    const charges = await t.app.inject({
      url: `/fhir/R4/ChargeItem?context=Encounter/${f.encounter.id}`,
      headers: t.authHeaders,
    });
    expect(charges.json().entry.map((e: Json) => e.resource.status)).toEqual(['billed', 'billed', 'billed']);
    expect((await operation(t, `Claim/${claim.id}/$submit`)).status).toBe(409);
    // The submitted claim's encounter is not built again, and capture leaves billed charges alone.
    expect((await operation(t, `Encounter/${f.encounter.id}/$build-claim`)).status).toBe(409);
    const recapture = await operation(t, `Encounter/${f.encounter.id}/$capture-charges`);
    expect(param(recapture.body, 'unchanged')[0].valueInteger).toBe(3);
  });
});

describe('Claim/$record-response and $balance', () => {
  it('records the payer answer as a ClaimResponse with adjudications, completes the Task, and shows the balance', async () => {
    const bySequence = (code: string) =>
      (claim.item as Json[]).find((i) => i.productOrService.coding[0].code === code)?.sequence as number;
    const res = await operation(t, `Claim/${claim.id}/$record-response`, [
      { name: 'disposition', valueString: 'Processed as primary' },
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: bySequence('99213') },
          { name: 'paid', valueDecimal: 80 },
          { name: 'adjustment', valueDecimal: 20 },
          { name: 'reason', valueString: 'CO-45 contractual obligation' },
        ],
      },
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: bySequence('36415') },
          { name: 'paid', valueDecimal: 30 },
        ],
      },
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: bySequence('93000') },
          { name: 'paid', valueDecimal: 25.25 },
          { name: 'adjustment', valueDecimal: 10 },
        ],
      },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const response = param(res.body, 'claimResponse')[0].resource;
    expect(response).toMatchObject({
      resourceType: 'ClaimResponse',
      status: 'active',
      outcome: 'complete',
      request: { reference: `Claim/${claim.id}` },
      payment: { amount: { value: 135.25 } },
    });
    const visit = (response.item as Json[]).find((i) => i.itemSequence === bySequence('99213'));
    expect(visit?.adjudication.map((a: Json) => [a.category.coding[0].code, a.amount.value])).toEqual([
      ['submitted', 120],
      ['eligible', 100],
      ['benefit', 80],
    ]);
    // 195.50 - 135.25 paid - 30.00 adjusted
    expect(money(res.body, 'balance')).toBe(30.25);
    const balance = await operation(t, `Claim/${claim.id}/$balance`, undefined, 'GET');
    expect([
      money(balance.body, 'total'),
      money(balance.body, 'paid'),
      money(balance.body, 'adjustment'),
      money(balance.body, 'balance'),
    ]).toEqual([195.5, 135.25, 30, 30.25]);
    const tasks = await t.app.inject({ url: `/fhir/R4/Task?focus=Claim/${claim.id}`, headers: t.authHeaders });
    expect(tasks.json().entry[0].resource).toMatchObject({
      status: 'completed',
      output: [{ valueReference: { reference: `ClaimResponse/${response.id}` } }],
    });
  });

  it('stores the ExplanationOfBenefit of the answer, which $balance lists and a search by claim or patient finds', async () => {
    const [response] = (
      await t.app.inject({ url: `/fhir/R4/ClaimResponse?request=Claim/${claim.id}`, headers: t.authHeaders })
    ).json().entry as Json[];
    const found = await t.app.inject({
      url: `/fhir/R4/ExplanationOfBenefit?claim=Claim/${claim.id}&patient=Patient/${f.patient.id}`,
      headers: t.authHeaders,
    });
    expect(found.json().total).toBe(1);
    const eob = found.json().entry[0].resource;
    expect(eob).toMatchObject({
      resourceType: 'ExplanationOfBenefit',
      status: 'active',
      use: 'claim',
      outcome: 'complete',
      disposition: 'Processed as primary',
      patient: { reference: `Patient/${f.patient.id}` },
      insurer: { reference: `Organization/${f.payer.id}` },
      provider: { reference: `Organization/${f.clinic.id}` },
      claim: { reference: `Claim/${claim.id}` },
      claimResponse: { reference: `ClaimResponse/${response.resource.id}` },
      insurance: [{ focal: true, coverage: { reference: `Coverage/${f.coverage.id}` } }],
      careTeam: [{ provider: { reference: `Practitioner/${f.doctor.id}` } }],
      payment: { amount: { value: 135.25, currency: 'USD' } },
    });
    expect(eob.total.map((x: Json) => [x.category.coding[0].code, x.amount.value])).toEqual([
      ['submitted', 195.5],
      ['benefit', 135.25],
    ]);
    const visit = (eob.item as Json[]).find((i) => i.productOrService.coding[0].code === '99213');
    expect(visit).toMatchObject({ net: { value: 120 }, servicedDate: '2025-03-14' });
    expect(visit?.adjudication.map((a: Json) => [a.category.coding[0].code, a.amount.value])).toEqual([
      ['submitted', 120],
      ['eligible', 100],
      ['benefit', 80],
    ]);
    expect(eob.item).toHaveLength(3);
    const balance = await operation(t, `Claim/${claim.id}/$balance`, undefined, 'GET');
    expect(param(balance.body, 'explanationOfBenefit').map((p) => p.resource.id)).toEqual([eob.id]);
  });

  it('a partial answer, then an error, then the rest: one EOB each; a withdrawn answer leaves the balance and the list', async () => {
    const g = await billingFixture(t, 'Partial');
    await operation(t, `Encounter/${g.encounter.id}/$capture-charges`);
    const built = (await operation(t, `Encounter/${g.encounter.id}/$build-claim`)).body;
    expect((await operation(t, `Claim/${built.id}/$submit`)).status).toBe(200);
    const line = (sequence: number, paid: number) => ({
      name: 'item',
      part: [
        { name: 'sequence', valuePositiveInt: sequence },
        { name: 'paid', valueDecimal: paid },
      ],
    });
    const first = await operation(t, `Claim/${built.id}/$record-response`, [
      { name: 'outcome', valueCode: 'partial' },
      line(1, 50),
    ]);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const firstEob = param(first.body, 'explanationOfBenefit')[0].resource;
    expect(firstEob).toMatchObject({ outcome: 'partial', payment: { amount: { value: 50 } } });
    expect(firstEob.item).toHaveLength(1);
    const denied = await operation(t, `Claim/${built.id}/$record-response`, [
      { name: 'outcome', valueCode: 'error' },
      { name: 'disposition', valueString: 'Member not found' },
    ]);
    const deniedEob = param(denied.body, 'explanationOfBenefit')[0].resource;
    expect(deniedEob).toMatchObject({ outcome: 'error', disposition: 'Member not found' });
    expect(deniedEob.item).toBeUndefined();
    const rest = await operation(t, `Claim/${built.id}/$record-response`, [line(2, 10), line(3, 20)]);
    const restEob = param(rest.body, 'explanationOfBenefit')[0].resource;
    expect(money(rest.body, 'paid')).toBe(80);
    let balance = await operation(t, `Claim/${built.id}/$balance`, undefined, 'GET');
    expect(param(balance.body, 'explanationOfBenefit').map((p) => p.resource.id)).toEqual([
      firstEob.id,
      deniedEob.id,
      restEob.id,
    ]);
    // The payer's first answer was entered in error: it no longer counts, and its EOB is not listed.
    const firstResponse = param(first.body, 'claimResponse')[0].resource;
    await put(t, { ...firstResponse, meta: undefined, status: 'entered-in-error' });
    balance = await operation(t, `Claim/${built.id}/$balance`, undefined, 'GET');
    expect(money(balance.body, 'paid')).toBe(30);
    expect(param(balance.body, 'explanationOfBenefit').map((p) => p.resource.id)).toEqual([deniedEob.id, restEob.id]);
  });

  it('refuses to answer a claim that names no payer, storing nothing', async () => {
    const g = await billingFixture(t, 'Uncovered');
    await operation(t, `Encounter/${g.encounter.id}/$capture-charges`);
    const built = (await operation(t, `Encounter/${g.encounter.id}/$build-claim`)).body;
    // Made active by hand, past $submit's checks.
    await put(t, { ...built, meta: undefined, status: 'active', insurer: undefined });
    const res = await operation(t, `Claim/${built.id}/$record-response`, [
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 1 },
          { name: 'paid', valueDecimal: 1 },
        ],
      },
    ]);
    expect(res.status).toBe(422);
    expect(res.body.issue[0].expression).toEqual(['Claim.insurer']);
    const stored = await t.app.inject({
      url: `/fhir/R4/ClaimResponse?request=Claim/${built.id}&_summary=count`,
      headers: t.authHeaders,
    });
    expect(stored.json().total).toBe(0);
  });

  it('refuses answers that do not fit the claim', async () => {
    const over = await operation(t, `Claim/${claim.id}/$record-response`, [
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 1 },
          { name: 'paid', valueDecimal: 500 },
        ],
      },
    ]);
    expect(over.status).toBe(422);
    expect(over.body.issue[0].details.text).toContain('exceed');
    const missing = await operation(t, `Claim/${claim.id}/$record-response`, [
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 9 },
          { name: 'paid', valueDecimal: 1 },
        ],
      },
    ]);
    expect(missing.status).toBe(422);
    expect(missing.body.issue[0].expression).toEqual(['item[0].sequence']);
    const negative = await operation(t, `Claim/${claim.id}/$record-response`, [
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 1 },
          { name: 'paid', valueDecimal: -1 },
        ],
      },
    ]);
    expect(negative.status).toBe(400);
    const badOutcome = await operation(t, `Claim/${claim.id}/$record-response`, [
      { name: 'outcome', valueCode: 'paid' },
    ]);
    expect(badOutcome.status).toBe(400);
    const notJson = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/Claim/${claim.id}/$record-response`,
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Patient' },
    });
    expect(notJson.statusCode).toBe(400);
  });

  it('refuses an answer to a draft claim with 409', async () => {
    const g = await billingFixture(t, 'Draft');
    await operation(t, `Encounter/${g.encounter.id}/$capture-charges`);
    const draft = (await operation(t, `Encounter/${g.encounter.id}/$build-claim`)).body;
    const res = await operation(t, `Claim/${draft.id}/$record-response`, [
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 1 },
          { name: 'paid', valueDecimal: 1 },
        ],
      },
    ]);
    expect(res.status).toBe(409);
  });
});

describe('Claim/$pdf', () => {
  it('answers a CMS-1500 style PDF whose text holds the patient, member id, codes and amounts', async () => {
    const res = await operation(t, `Claim/${claim.id}/$pdf`, undefined, 'GET');
    expect(res.status).toBe(200);
    expect(res.type).toContain('application/pdf');
    expect(res.raw.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(res.raw);
    for (const expected of [
      'HEALTH INSURANCE CLAIM FORM',
      'DOE, JANE',
      'W123456789',
      '05/02/1980',
      'Acme Health',
      'GRP-42',
      'A. I10',
      'B. E11.9',
      '99213',
      '36415',
      '93000',
      '120.00',
      '45.50',
      '$ 195.50',
      '$ 135.25',
      '$ 30.25',
      '03/14/2025',
      'NPI 1234567893',
      'Hearth Family Clinic',
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('continues a claim of more than six lines on a second page', async () => {
    const many = {
      ...claim,
      id: undefined,
      meta: undefined,
      status: 'draft',
      item: Array.from({ length: 8 }, (_, i) => ({
        ...claim.item[0],
        sequence: i + 1,
        productOrService: { coding: [{ system: CPT, code: `9921${i}` }] },
      })),
      total: { value: 960, currency: 'USD' },
    };
    const created = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Claim',
      headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
      payload: many,
    });
    const res = await operation(t, `Claim/${created.json().id}/$pdf`, undefined, 'GET');
    const pdf = await getDocumentProxy(new Uint8Array(res.raw));
    expect(pdf.numPages).toBe(2);
    const { text } = await extractText(pdf, { mergePages: false });
    expect(text[0]).toContain('continued');
    expect(text[1]).toContain('99217');
    expect(text[1]).toContain('$ 960.00');
  });

  it('answers 404 for an unknown claim', async () => {
    expect((await operation(t, 'Claim/unknown/$pdf', undefined, 'GET')).status).toBe(404);
  });
});
