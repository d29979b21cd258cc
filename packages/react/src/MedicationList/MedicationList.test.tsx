// @vitest-environment jsdom
import type { MedicationRequest } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { MedicationList } from './MedicationList.js';

const request = (id: string, status: MedicationRequest['status'], name: string): MedicationRequest => ({
  resourceType: 'MedicationRequest',
  id,
  status,
  intent: 'order',
  subject: { reference: 'Patient/p1' },
  medicationCodeableConcept: { text: name },
  authoredOn: '2024-03-01T10:00:00Z',
  dosageInstruction: [
    {
      doseAndRate: [{ doseQuantity: { value: 1, unit: 'tablet' } }],
      route: { coding: [{ system: 'http://snomed.info/sct', code: '26643006' }] },
      timing: { repeat: { frequency: 1, period: 1, periodUnit: 'd' } },
    },
  ],
});

describe('MedicationList', () => {
  it('groups by status and stops an active one with a reason', async () => {
    const user = userEvent.setup({ delay: null });
    const stored = [
      request('m1', 'active', 'lisinopril 10 MG Oral Tablet'),
      request('m2', 'completed', 'amoxicillin 500 MG Oral Capsule'),
    ];
    const { client, requests } = mockClient({
      'GET /fhir/R4/MedicationRequest': () => bundle(stored),
      'GET /fhir/R4/MedicationAdministration': () => bundle([]),
      'PUT /fhir/R4/MedicationRequest/m1': (req) => {
        stored[0] = req.body as MedicationRequest;
        return stored[0];
      },
    });
    renderWithHearth(<MedicationList patientId="p1" />, client);
    const active = await screen.findByRole('region', { name: 'Active medications' });
    await within(active).findByText('lisinopril 10 MG Oral Tablet');
    within(active).getByText('Take 1 tablet by mouth once a day');
    within(screen.getByRole('region', { name: 'Completed medications' })).getByText('amoxicillin 500 MG Oral Capsule');
    within(screen.getByRole('region', { name: 'Stopped medications' })).getByText('None');

    await user.click(within(active).getByRole('button', { name: 'Stop' }));
    await user.click(screen.getByRole('button', { name: 'Confirm stop' }));
    await screen.findByText('Give a reason for stopping');
    await user.type(screen.getByRole('textbox', { name: 'Reason for stopping' }), 'Dry cough');
    await user.click(screen.getByRole('button', { name: 'Confirm stop' }));
    const stopped = screen.getByRole('region', { name: 'Stopped medications' });
    await within(stopped).findByText('lisinopril 10 MG Oral Tablet');
    within(stopped).getByText(/Stopped: Dry cough/);
    const put = requests.find((r) => r.method === 'PUT');
    expect(put?.body).toMatchObject({ status: 'stopped', statusReason: { text: 'Dry cough' } });
    await waitFor(() => expect(within(active).queryByRole('button', { name: 'Stop' })).toBeNull());
  });
});
