import type { Claim, ClaimResponse } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { ADJUDICATION } from './common.js';
import { checkExplainable, explanationOfBenefit } from './explanation-of-benefit.js';

const usd = (value: number) => ({ value, currency: 'USD' });
const category = (code: string) => ({ coding: [{ system: ADJUDICATION, code }] });

const claim: Claim = {
  resourceType: 'Claim',
  id: 'c1',
  status: 'active',
  type: { coding: [{ code: 'professional' }] },
  use: 'claim',
  patient: { reference: 'Patient/p1' },
  billablePeriod: { start: '2025-03-14', end: '2025-03-14' },
  created: '2025-03-15',
  insurer: { reference: 'Organization/payer' },
  provider: { reference: 'Organization/clinic' },
  priority: { coding: [{ code: 'normal' }] },
  careTeam: [{ sequence: 1, provider: { reference: 'Practitioner/d1' } }],
  diagnosis: [{ sequence: 1, diagnosisCodeableConcept: { coding: [{ code: 'I10' }] } }],
  insurance: [{ sequence: 1, focal: true, coverage: { reference: 'Coverage/v1' }, preAuthRef: ['PA-1'] }],
  item: [
    {
      sequence: 1,
      productOrService: { coding: [{ code: '99213' }] },
      servicedDate: '2025-03-14',
      quantity: { value: 1 },
      unitPrice: usd(120),
      net: usd(120),
      diagnosisSequence: [1],
      encounter: [{ reference: 'Encounter/e1' }],
    },
    {
      sequence: 2,
      productOrService: { coding: [{ code: '36415' }] },
      quantity: { value: 2 },
      unitPrice: usd(15),
      net: usd(30),
    },
  ],
  total: usd(150),
};

const response: ClaimResponse = {
  resourceType: 'ClaimResponse',
  id: 'r1',
  status: 'active',
  type: claim.type,
  use: 'claim',
  patient: claim.patient,
  created: '2025-04-01T10:00:00.000Z',
  insurer: { reference: 'Organization/payer' },
  request: { reference: 'Claim/c1' },
  outcome: 'partial',
  disposition: 'Line 2 pending',
  item: [
    {
      itemSequence: 1,
      adjudication: [
        { category: category('submitted'), amount: usd(120) },
        { category: category('eligible'), amount: usd(100), reason: { text: 'CO-45' } },
        { category: category('benefit'), amount: usd(80) },
      ],
    },
  ],
  total: [
    { category: category('submitted'), amount: usd(120) },
    { category: category('benefit'), amount: usd(80) },
  ],
  payment: { type: { coding: [{ code: 'partial' }] }, date: '2025-04-01', amount: usd(80) },
};

describe('explanationOfBenefit', () => {
  it("combines the claim's parties, coverage and answered lines with the answer's adjudication and payment", () => {
    const eob = explanationOfBenefit(claim, response);
    expect(eob).toMatchObject({
      resourceType: 'ExplanationOfBenefit',
      status: 'active',
      type: claim.type,
      use: 'claim',
      patient: { reference: 'Patient/p1' },
      billablePeriod: claim.billablePeriod,
      created: response.created,
      insurer: { reference: 'Organization/payer' },
      provider: { reference: 'Organization/clinic' },
      claim: { reference: 'Claim/c1' },
      claimResponse: { reference: 'ClaimResponse/r1' },
      outcome: 'partial',
      disposition: 'Line 2 pending',
      careTeam: claim.careTeam,
      diagnosis: claim.diagnosis,
      insurance: [{ focal: true, coverage: { reference: 'Coverage/v1' }, preAuthRef: ['PA-1'] }],
      total: response.total,
      payment: response.payment,
    });
    // Only the line this answer adjudicated, with the claim's details and the answer's amounts.
    expect(eob.item).toEqual([{ ...claim.item?.[0], adjudication: response.item?.[0].adjudication }]);
  });

  it('explains an answer with no lines (an error) without items', () => {
    const eob = explanationOfBenefit(claim, {
      ...response,
      outcome: 'error',
      item: undefined,
      total: undefined,
      payment: undefined,
    });
    expect(eob.outcome).toBe('error');
    expect('item' in eob).toBe(false);
    expect('payment' in eob).toBe(false);
  });

  it('refuses a claim without an insurer, naming the element', () => {
    try {
      checkExplainable({ ...claim, insurer: undefined });
      expect.unreachable();
    } catch (e) {
      expect((e as { outcome: { issue: { expression: string[] }[] } }).outcome.issue[0].expression).toEqual([
        'Claim.insurer',
      ]);
    }
    expect(() => checkExplainable(claim)).not.toThrow();
  });
});
