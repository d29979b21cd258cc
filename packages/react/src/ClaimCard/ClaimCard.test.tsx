// @vitest-environment jsdom
import type { Claim } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWithHearth, Reply } from '../test/render.js';
import { ClaimCard } from './ClaimCard.js';

const usd = (value: number) => ({ value, currency: 'USD' });
const claim = (status: Claim['status']): Claim => ({
  resourceType: 'Claim',
  id: 'c1',
  meta: { versionId: '1' },
  status,
  type: { coding: [{ code: 'professional' }] },
  use: 'claim',
  patient: { reference: 'Patient/p1' },
  created: '2025-03-14',
  provider: { reference: 'Organization/o1' },
  priority: { coding: [{ code: 'normal' }] },
  insurance: [{ sequence: 1, focal: true, coverage: { reference: 'Coverage/v1' } }],
  item: [
    {
      sequence: 1,
      productOrService: { coding: [{ code: '99213' }], text: 'Office visit' },
      quantity: { value: 1 },
      unitPrice: usd(120),
      net: usd(120),
    },
    {
      sequence: 2,
      productOrService: { coding: [{ code: '36415' }], text: 'Venipuncture' },
      quantity: { value: 2 },
      unitPrice: usd(15),
      net: usd(30),
    },
  ],
  total: usd(150),
});

const problem = (text: string, where: string, severity = 'error') => ({
  severity,
  code: 'business-rule',
  details: { text },
  expression: [where],
});

describe('ClaimCard', () => {
  it('validates a draft claim, lists the problems with their locations, and shows them when submit is refused', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'GET /fhir/R4/Claim/c1/$validate-claim': () => ({
        resourceType: 'OperationOutcome',
        issue: [
          problem('The claim has no diagnosis', 'Claim.diagnosis'),
          problem('No NPI', 'Claim.provider', 'warning'),
        ],
      }),
      'POST /fhir/R4/Claim/c1/$submit': () =>
        new Reply(422, {
          resourceType: 'OperationOutcome',
          issue: [problem('The total 1.00 is not the sum', 'Claim.total')],
        }),
    });
    renderWithHearth(<ClaimCard claim={claim('draft')} />, client);
    const card = screen.getByRole('region', { name: 'Claim c1' });
    within(card).getByText('Total $150.00');
    within(card).getByText('$30.00');
    await user.click(within(card).getByRole('button', { name: 'Validate claim' }));
    const list = await within(card).findByRole('list', { name: 'Claim problems' });
    expect(list.textContent).toContain('Error: The claim has no diagnosis (Claim.diagnosis)');
    expect(list.textContent).toContain('Warning: No NPI (Claim.provider)');
    await user.click(within(card).getByRole('button', { name: 'Submit claim' }));
    await waitFor(() =>
      expect(within(card).getByRole('list', { name: 'Claim problems' }).textContent).toContain('(Claim.total)'),
    );
    expect(requests.filter((r) => r.method === 'POST').map((r) => r.url.pathname)).toEqual([
      '/fhir/R4/Claim/c1/$submit',
    ]);
  });

  it('says a valid claim is valid and submits it', async () => {
    const user = userEvent.setup({ delay: null });
    let changed = 0;
    const { client } = mockClient({
      'GET /fhir/R4/Claim/c1/$validate-claim': () => ({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'information', code: 'informational', details: { text: 'The claim is valid' } }],
      }),
      'POST /fhir/R4/Claim/c1/$submit': () => ({
        resourceType: 'Parameters',
        parameter: [{ name: 'claim', resource: claim('active') }],
      }),
    });
    renderWithHearth(<ClaimCard claim={claim('draft')} onChanged={() => changed++} />, client);
    await user.click(screen.getByRole('button', { name: 'Validate claim' }));
    await screen.findByText('The claim is valid');
    await user.click(screen.getByRole('button', { name: 'Submit claim' }));
    await waitFor(() => expect(changed).toBe(1));
  });

  it('shows the balance of a submitted claim and records the payer response per line', async () => {
    const user = userEvent.setup({ delay: null });
    let answered = false;
    const category = (code: string) => ({
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/adjudication', code }],
    });
    const eob = {
      resourceType: 'ExplanationOfBenefit',
      id: 'eob1',
      status: 'active',
      outcome: 'complete',
      created: '2025-04-01T10:00:00Z',
      disposition: 'Processed as primary',
      item: [
        {
          sequence: 1,
          productOrService: { coding: [{ code: '99213' }] },
          adjudication: [
            { category: category('submitted'), amount: usd(120) },
            { category: category('eligible'), amount: usd(100) },
            { category: category('benefit'), amount: usd(80) },
          ],
        },
        {
          sequence: 2,
          productOrService: { coding: [{ code: '36415' }] },
          adjudication: [
            { category: category('submitted'), amount: usd(30) },
            { category: category('eligible'), amount: usd(30) },
            { category: category('benefit'), amount: usd(30) },
          ],
        },
      ],
      payment: { date: '2025-04-02', amount: usd(110) },
    };
    const balance = () => ({
      resourceType: 'Parameters',
      parameter: [
        { name: 'total', valueMoney: usd(150) },
        { name: 'paid', valueMoney: usd(answered ? 110 : 0) },
        { name: 'adjustment', valueMoney: usd(answered ? 20 : 0) },
        { name: 'balance', valueMoney: usd(answered ? 20 : 150) },
        { name: 'responses', valueInteger: answered ? 1 : 0 },
        ...(answered ? [{ name: 'explanationOfBenefit', resource: eob }] : []),
      ],
    });
    const { client, requests } = mockClient({
      'GET /fhir/R4/Claim/c1/$balance': balance,
      'POST /fhir/R4/Claim/c1/$record-response': () => {
        answered = true;
        return balance();
      },
    });
    const visited: string[] = [];
    renderWithHearth(<ClaimCard claim={claim('active')} />, client, (to) => visited.push(to));
    const group = await screen.findByRole('group', { name: 'Claim balance' });
    expect(group.textContent).toContain('Balance $150.00');
    within(group).getByText("Awaiting the payer's answer");
    expect(screen.queryByRole('list', { name: 'Explanations of benefit' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Record payer response' }));
    await user.type(screen.getByRole('textbox', { name: 'Paid for line 1' }), '80');
    await user.type(screen.getByRole('textbox', { name: 'Adjustment for line 1' }), '20');
    await user.type(screen.getByRole('textbox', { name: 'Paid for line 2' }), '30');
    await user.click(screen.getByRole('button', { name: 'Save response' }));
    await waitFor(() =>
      expect(screen.getByRole('group', { name: 'Claim balance' }).textContent).toContain('Balance $20.00'),
    );
    // The payer's answer as its ExplanationOfBenefit: when, outcome, paid, written off, and a link to it.
    const explained = screen.getByRole('list', { name: 'Explanations of benefit' });
    const item = within(explained).getByRole('listitem', { name: 'Explanation of benefit of Apr 2, 2025' });
    expect(item.textContent).toContain('Processed');
    expect(item.textContent).toContain('Paid $110.00');
    expect(item.textContent).toContain('Adjusted $20.00');
    expect(item.textContent).toContain('2 lines');
    expect(item.textContent).toContain('Processed as primary');
    const link = within(item).getByRole('link', { name: 'EOB of Apr 2, 2025' });
    expect(link.getAttribute('href')).toBe('/ExplanationOfBenefit/eob1');
    await user.click(link);
    expect(visited).toEqual(['/ExplanationOfBenefit/eob1']);
    const body = requests.find((r) => r.method === 'POST')?.body as { parameter: { name: string; part?: unknown[] }[] };
    expect(body.parameter.filter((p) => p.name === 'item')).toEqual([
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 1 },
          { name: 'paid', valueDecimal: 80 },
          { name: 'adjustment', valueDecimal: 20 },
        ],
      },
      {
        name: 'item',
        part: [
          { name: 'sequence', valuePositiveInt: 2 },
          { name: 'paid', valueDecimal: 30 },
          { name: 'adjustment', valueDecimal: 0 },
        ],
      },
    ]);
  });
});
