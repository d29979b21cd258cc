// @vitest-environment jsdom
import type { ServiceRequest } from '@hearth/core';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { labOrderTransaction } from '../LabOrderForm/order.js';
import { LabRequisition } from './LabRequisition.js';

describe('LabRequisition', () => {
  it('shows the requisition number as a barcode, the patient, orderer and tests, and prints', async () => {
    const user = userEvent.setup({ delay: null });
    const orders = (
      labOrderTransaction({
        tests: [
          { system: 'http://loinc.org', code: '58410-2', display: 'CBC panel - Blood by Automated count' },
          { system: 'http://loinc.org', code: '4548-4', display: 'Hemoglobin A1c/Hemoglobin.total in Blood' },
        ],
        status: 'active',
        priority: 'urgent',
        subject: { reference: 'Patient/p1' },
        reasonCode: { text: 'Fatigue' },
        specimen: {},
        authoredOn: '2026-03-04T10:00:00Z',
        requisition: 'L260304-ABCDEF',
      }).entry ?? []
    ).map((e, i) => ({ ...(e.resource as ServiceRequest), id: `s${i}` }));
    const print = vi.spyOn(window, 'print').mockImplementation(() => undefined);
    const { client } = mockClient({});
    renderWithHearth(
      <LabRequisition
        orders={orders}
        patient={{
          resourceType: 'Patient',
          name: [{ given: ['Ada'], family: 'Lovelace' }],
          birthDate: '1965-12-10',
          identifier: [{ system: 'urn:mrn', value: 'MRN-1' }],
        }}
        requester={{ resourceType: 'Practitioner', name: [{ prefix: ['Dr'], family: 'Who' }] }}
      />,
      client,
    );
    expect(screen.getByLabelText('Requisition barcode').textContent).toBe('*L260304-ABCDEF*');
    const people = screen.getByRole('table', { name: 'Patient and orderer' });
    expect(within(people).getByText('Ada Lovelace')).toBeTruthy();
    expect(within(people).getByText(/MRN-1/)).toBeTruthy();
    expect(within(people).getByText('Dr Who')).toBeTruthy();
    expect(within(people).getByText('Fatigue')).toBeTruthy();
    const tests = within(screen.getByRole('table', { name: 'Tests' })).getAllByRole('row');
    expect(tests.slice(1).map((r) => r.textContent)).toEqual([
      expect.stringContaining('Whole blood, EDTA (lavender top)'),
      expect.stringContaining('Whole blood, EDTA (lavender top)'),
    ]);
    expect(tests[1].textContent).toContain('URGENT');
    await user.click(screen.getByRole('button', { name: 'Print' }));
    expect(print).toHaveBeenCalledTimes(1);
    print.mockRestore();
  });
});
