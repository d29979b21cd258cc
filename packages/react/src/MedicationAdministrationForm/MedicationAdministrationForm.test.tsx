// @vitest-environment jsdom
import type { MedicationAdministration, MedicationRequest } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { MedicationList } from '../MedicationList/MedicationList.js';
import { bundle, mockClient, renderWithHearth, type Recorded } from '../test/render.js';
import { administrationErrors, draftFor } from './administration.js';

const request: MedicationRequest = {
  resourceType: 'MedicationRequest',
  id: 'm1',
  status: 'active',
  intent: 'order',
  subject: { reference: 'Patient/p1' },
  encounter: { reference: 'Encounter/e1' },
  medicationCodeableConcept: {
    coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '617310' }],
    text: 'atorvastatin 20 MG Oral Tablet',
  },
  dosageInstruction: [
    {
      doseAndRate: [{ doseQuantity: { value: 1, unit: 'tablet' } }],
      route: { coding: [{ system: 'http://snomed.info/sct', code: '26643006' }] },
      timing: { repeat: { frequency: 1, period: 1, periodUnit: 'd' } },
    },
  ],
};
const nurse = { reference: 'Practitioner/n1', display: 'Nurse Joy' };

describe('MedicationAdministrationForm in the medication list', () => {
  it('records a dose given and a dose not given with its reason, and lists them under the prescription', async () => {
    const user = userEvent.setup({ delay: null });
    const stored: MedicationAdministration[] = [];
    const { client, requests } = mockClient({
      'GET /fhir/R4/MedicationRequest': () => bundle([request]),
      'GET /fhir/R4/MedicationAdministration': () => bundle([...stored].reverse()),
      'POST /fhir/R4/MedicationAdministration': (req: Recorded) => {
        const saved = { ...(req.body as MedicationAdministration), id: `a${stored.length + 1}` };
        stored.push(saved);
        return saved;
      },
    });
    renderWithHearth(<MedicationList patientId="p1" performer={nurse} />, client);
    const item = await screen.findByRole('listitem', { name: 'atorvastatin 20 MG Oral Tablet' });
    await user.click(within(item).getByRole('button', { name: 'Record administration' }));
    const form = within(item).getByRole('form', { name: 'Record administration of atorvastatin 20 MG Oral Tablet' });
    // Dose, unit and route start from the prescription.
    expect((within(form).getByRole('textbox', { name: 'Dose given' }) as HTMLInputElement).value).toBe('1');
    expect((within(form).getByRole('textbox', { name: 'Unit' }) as HTMLInputElement).value).toBe('tablet');
    expect((within(form).getByRole('textbox', { name: 'Route' }) as HTMLInputElement).value).toBe('Oral route');
    await user.click(within(form).getByRole('button', { name: 'Record' }));
    const list = await within(item).findByRole('list', { name: 'Administrations of atorvastatin 20 MG Oral Tablet' });
    await within(list).findByText(/· 1 tablet · Oral route/);
    expect(within(list).getByText('Given')).toBeTruthy();
    const first = requests.find((r) => r.method === 'POST')?.body as MedicationAdministration;
    expect(first).toMatchObject({
      status: 'completed',
      medicationCodeableConcept: request.medicationCodeableConcept,
      subject: { reference: 'Patient/p1' },
      context: { reference: 'Encounter/e1' },
      request: { reference: 'MedicationRequest/m1' },
      performer: [{ actor: nurse }],
      dosage: {
        dose: { value: 1, unit: 'tablet' },
        route: { coding: [{ system: 'http://snomed.info/sct', code: '26643006', display: 'Oral route' }] },
      },
    });
    expect(Date.now() - Date.parse(first.effectiveDateTime as string)).toBeLessThan(60_000);

    await user.click(within(item).getByRole('button', { name: 'Record administration' }));
    const again = within(item).getByRole('form', { name: /Record administration/ });
    await user.click(within(again).getByRole('radio', { name: 'Not given' }));
    expect(within(again).queryByRole('textbox', { name: 'Dose given' })).toBeNull();
    await user.click(within(again).getByRole('button', { name: 'Record' }));
    expect(await within(again).findByText('Give the reason it was not given')).toBeTruthy();
    await user.type(within(again).getByRole('textbox', { name: 'Reason not given' }), 'Patient nil by mouth');
    await user.click(within(again).getByRole('button', { name: 'Record' }));
    await waitFor(() => expect(within(list).getAllByRole('listitem')).toHaveLength(2));
    expect(within(list).getByText('Not given')).toBeTruthy();
    expect(within(list).getByText(/Patient nil by mouth/)).toBeTruthy();
    const second = requests.filter((r) => r.method === 'POST')[1].body as MedicationAdministration;
    expect(second).toMatchObject({ status: 'not-done', statusReason: [{ text: 'Patient nil by mouth' }] });
    expect(second.dosage).toBeUndefined();
  });

  it('refuses a missing dose and a time in the future', () => {
    const now = new Date('2026-03-10T12:00:00Z');
    const draft = draftFor(request, now);
    expect(administrationErrors(draft, now)).toEqual({});
    expect(administrationErrors({ ...draft, doseValue: undefined, time: '2026-03-10T13:00:00Z' }, now)).toEqual({
      dose: 'Enter the dose given',
      time: 'An administration cannot be recorded in the future',
    });
    expect(administrationErrors({ ...draft, doseValue: 'abc', doseUnit: ' ' }, now)).toMatchObject({
      dose: 'Enter the dose given',
      doseUnit: 'Enter the unit',
    });
  });
});
