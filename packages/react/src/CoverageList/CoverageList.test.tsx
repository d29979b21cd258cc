// @vitest-environment jsdom
import type { Coverage } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { CoverageList } from './CoverageList.js';
import { coverageFromForm } from './CoverageForm.js';

const stored: Coverage = {
  resourceType: 'Coverage',
  id: 'v1',
  status: 'active',
  beneficiary: { reference: 'Patient/p1' },
  payor: [{ reference: 'Organization/acme' }],
  subscriberId: 'W123',
  period: { start: '2000-01-01' },
};

describe('CoverageList', () => {
  it('lists coverages with whether they are in force, and edits the member id', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({
      'GET /fhir/R4/Coverage': () =>
        bundle([stored, { resourceType: 'Organization', id: 'acme', name: 'Acme Health' }]),
      'PUT /fhir/R4/Coverage/v1': (req) => req.body,
    });
    let changed = 0;
    renderWithHearth(<CoverageList patientId="p1" onChange={() => changed++} />, client);
    const list = await screen.findByRole('list', { name: 'Coverages' });
    await within(list).findByText(/Acme Health · Member W123/);
    within(list).getByText('In force');
    await user.click(within(list).getByRole('button', { name: 'Edit coverage W123' }));
    const form = screen.getByRole('form', { name: 'Edit coverage' });
    const member = within(form).getByRole('textbox', { name: 'Member id' });
    await user.clear(member);
    await user.type(member, 'W999');
    await user.type(within(form).getByRole('textbox', { name: 'Group number' }), 'GRP-1');
    await user.click(within(form).getByRole('button', { name: 'Save coverage' }));
    await waitFor(() => expect(changed).toBe(1));
    const put = requests.find((r) => r.method === 'PUT');
    expect(put?.body).toMatchObject({
      id: 'v1',
      subscriberId: 'W999',
      payor: [{ reference: 'Organization/acme' }],
      class: [{ value: 'GRP-1' }],
    });
  });

  it('refuses to save a new coverage without a payer', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({ 'GET /fhir/R4/Coverage': () => bundle([]) });
    renderWithHearth(<CoverageList patientId="p1" />, client);
    await screen.findByText('No coverage recorded');
    await user.click(screen.getByRole('button', { name: 'Add coverage' }));
    await user.type(screen.getByRole('textbox', { name: 'Member id' }), 'W1');
    await user.click(screen.getByRole('button', { name: 'Save coverage' }));
    await screen.findByText('Choose the payer');
    expect(requests.some((r) => r.method === 'POST')).toBe(false);
  });

  it('builds the Coverage from the fields, keeping what the form does not show', () => {
    const c = coverageFromForm(
      'p1',
      { ...stored, order: 2 },
      {
        payer: undefined,
        memberId: ' X1 ',
        relationship: 'spouse',
        group: '',
        start: '',
        end: '2030-01-01',
        status: 'active',
      },
    );
    expect(c).toMatchObject({
      order: 2,
      subscriberId: 'X1',
      payor: [{ reference: 'Organization/acme' }],
      period: { end: '2030-01-01' },
      relationship: { coding: [{ code: 'spouse' }] },
    });
    expect(c.class).toBeUndefined();
  });
});
