// @vitest-environment jsdom
import type { ChargeItem, Claim } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { EncounterCharges } from './EncounterCharges.js';

const encounter = {
  resourceType: 'Encounter',
  id: 'e1',
  status: 'finished',
  class: { code: 'AMB' },
  type: [{ text: 'Office visit' }],
  subject: { reference: 'Patient/p1' },
  period: { start: '2025-03-14T09:00:00Z' },
};

const charge: ChargeItem = {
  resourceType: 'ChargeItem',
  id: 'ch1',
  status: 'billable',
  code: { coding: [{ code: '99213' }], text: 'Office visit, level 3' },
  subject: { reference: 'Patient/p1' },
  quantity: { value: 1 },
  priceOverride: { value: 120, currency: 'USD' },
};

describe('EncounterCharges', () => {
  it('captures the charges of an encounter, shows their warnings, and builds a claim', async () => {
    const user = userEvent.setup({ delay: null });
    const charges: ChargeItem[] = [];
    const claims: Claim[] = [];
    const { client, requests } = mockClient({
      'GET /fhir/R4/Encounter': () => bundle([encounter]),
      'GET /fhir/R4/ChargeItem': () => bundle(charges),
      'GET /fhir/R4/Claim': () => bundle(claims),
      'POST /fhir/R4/Encounter/e1/$capture-charges': () => {
        charges.push(charge);
        return {
          resourceType: 'Parameters',
          parameter: [
            { name: 'chargeItem', resource: charge },
            { name: 'created', valueInteger: 1 },
            {
              name: 'issues',
              resource: {
                resourceType: 'OperationOutcome',
                issue: [{ severity: 'warning', code: 'not-found', details: { text: 'No fee for 99499' } }],
              },
            },
          ],
        };
      },
      'POST /fhir/R4/Encounter/e1/$build-claim': () => {
        const claim = {
          resourceType: 'Claim',
          id: 'c1',
          status: 'draft',
          item: [],
          total: { value: 120, currency: 'USD' },
        } as unknown as Claim;
        claims.push(claim);
        return claim;
      },
    });
    renderWithHearth(<EncounterCharges patientId="p1" />, client);
    const section = await screen.findByRole('region', { name: /^Billing for Office visit/ });
    await within(section).findByText('No charges captured');
    expect(within(section).queryByRole('button', { name: 'Build claim' })).toBeNull();
    await user.click(within(section).getByRole('button', { name: 'Capture charges' }));
    await within(section).findByText('Office visit, level 3');
    within(section).getByText('$120.00');
    within(section).getByText('No fee for 99499');
    await user.click(within(section).getByRole('button', { name: 'Build claim' }));
    await within(section).findByRole('region', { name: 'Claim c1' });
    await waitFor(() => within(section).getByRole('button', { name: 'Rebuild claim' }));
    expect(requests.find((r) => r.url.pathname === '/fhir/R4/Encounter')?.url.searchParams.get('subject')).toBe(
      'Patient/p1',
    );
  });
});
