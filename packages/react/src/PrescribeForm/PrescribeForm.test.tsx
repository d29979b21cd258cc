// @vitest-environment jsdom
import type { AllergyIntolerance, MedicationRequest } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { PrescribeForm } from './PrescribeForm.js';
import { doseUnitOf, prescriptionResource, RXNORM, routeOf } from './prescription.js';

const amoxicillin = { system: RXNORM, code: '308191', display: 'amoxicillin 500 MG Oral Capsule' };
const penicillinAllergy: AllergyIntolerance = {
  resourceType: 'AllergyIntolerance',
  id: 'a1',
  patient: { reference: 'Patient/p1' },
  criticality: 'high',
  clinicalStatus: { coding: [{ code: 'active' }] },
  code: {
    coding: [{ system: 'http://snomed.info/sct', code: '373270004', display: 'Penicillin class' }],
    text: 'Penicillin',
  },
};

function server(allergies: AllergyIntolerance[]) {
  const created: MedicationRequest[] = [];
  const mock = mockClient({
    'GET /fhir/R4/ValueSet/$expand': () => ({
      resourceType: 'ValueSet',
      status: 'active',
      expansion: { timestamp: '2024-01-01', contains: [amoxicillin] },
    }),
    'GET /fhir/R4/AllergyIntolerance': () => bundle(allergies),
    'GET /fhir/R4/ConceptMap/$translate': () => ({
      resourceType: 'Parameters',
      parameter: [
        { name: 'result', valueBoolean: true },
        {
          name: 'match',
          part: [
            { name: 'equivalence', valueCode: 'wider' },
            { name: 'concept', valueCoding: { system: 'http://snomed.info/sct', code: '373270004' } },
          ],
        },
      ],
    }),
    'POST /fhir/R4/MedicationRequest': (req) => {
      const r = { ...(req.body as MedicationRequest), id: 'm1' };
      created.push(r);
      return r;
    },
  });
  return { ...mock, created };
}

async function fill(user: ReturnType<typeof userEvent.setup>) {
  await user.type(screen.getByRole('textbox', { name: 'Medication' }), 'amox');
  await user.click(await screen.findByRole('option', { name: /amoxicillin 500 MG Oral Capsule/ }));
  await user.type(screen.getByRole('textbox', { name: 'Dose' }), '1');
  await user.click(screen.getByRole('textbox', { name: 'Frequency' }));
  await user.click(await screen.findByRole('option', { name: '3 times a day' }));
  await user.type(screen.getByRole('textbox', { name: 'Duration (days)' }), '10');
  await user.type(screen.getByRole('textbox', { name: 'Quantity to dispense' }), '30');
  await user.type(screen.getByRole('textbox', { name: 'Refills' }), '0');
}

describe('PrescribeForm', () => {
  it('shows the sig as the dosage is built and signs a structured MedicationRequest', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, created } = server([]);
    const onPrescribed = vi.fn();
    renderWithHearth(<PrescribeForm patientId="p1" onPrescribed={onPrescribed} />, client);
    await fill(user);
    expect(screen.getByRole('status', { name: 'Sig' }).textContent).toBe(
      'Sig: Take 1 capsule by mouth 3 times a day for 10 days',
    );
    await user.click(screen.getByRole('button', { name: 'Sign prescription' }));
    await waitFor(() => expect(onPrescribed).toHaveBeenCalled());
    expect(created[0]).toMatchObject({
      status: 'active',
      intent: 'order',
      subject: { reference: 'Patient/p1' },
      medicationCodeableConcept: { coding: [amoxicillin] },
      dosageInstruction: [
        {
          text: 'Take 1 capsule by mouth 3 times a day for 10 days',
          doseAndRate: [{ doseQuantity: { value: 1, unit: 'capsule' } }],
          timing: { repeat: { frequency: 3, period: 1, periodUnit: 'd', boundsDuration: { value: 10, code: 'd' } } },
          route: { coding: [{ code: '26643006' }] },
        },
      ],
      dispenseRequest: { quantity: { value: 30 }, numberOfRepeatsAllowed: 0 },
    });
    expect(created[0].detectedIssue).toBeUndefined();
  });

  it('warns of a penicillin allergy for amoxicillin and signs only once acknowledged, recording a DetectedIssue', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, created } = server([penicillinAllergy]);
    renderWithHearth(<PrescribeForm patientId="p1" />, client);
    await fill(user);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Allergic to Penicillin (high criticality)');
    const sign = screen.getByRole('button', { name: 'Sign prescription' }) as HTMLButtonElement;
    expect(sign.disabled).toBe(true);
    await user.click(screen.getByRole('checkbox', { name: 'I have reviewed the allergy and prescribe anyway' }));
    await user.click(sign);
    await waitFor(() => expect(created).toHaveLength(1));
    expect(created[0].detectedIssue).toEqual([{ reference: '#allergy1' }]);
    expect(created[0].contained?.[0]).toMatchObject({
      resourceType: 'DetectedIssue',
      code: { coding: [{ code: 'DALG' }] },
      severity: 'high',
      implicated: [{ reference: 'AllergyIntolerance/a1' }],
    });
  });

  it('ignores a resolved allergy', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = server([{ ...penicillinAllergy, clinicalStatus: { coding: [{ code: 'resolved' }] } }]);
    renderWithHearth(<PrescribeForm patientId="p1" />, client);
    await fill(user);
    await screen.findByText(/Sig: Take 1 capsule/);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});

describe('prescription helpers', () => {
  it("take the dose unit and route from the drug's RxNorm name", () => {
    expect(doseUnitOf('amoxicillin 500 MG Oral Capsule')).toBe('capsule');
    expect(doseUnitOf('200 ACTUAT albuterol 0.09 MG/ACTUAT Metered Dose Inhaler')).toBe('puff');
    expect(routeOf('200 ACTUAT albuterol 0.09 MG/ACTUAT Metered Dose Inhaler')).toBe('447694001');
    expect(routeOf('lisinopril 10 MG Oral Tablet')).toBe('26643006');
  });

  it('leave out what was not given', () => {
    const r = prescriptionResource(
      { medication: amoxicillin, doseUnit: 'capsule', routeCode: '26643006', periodUnit: 'd', asNeeded: false },
      '',
      { reference: 'Patient/p1' },
      undefined,
      '2024-01-01T00:00:00Z',
      [],
    );
    expect(r.dispenseRequest).toBeUndefined();
    expect(r.dosageInstruction?.[0]).toEqual({
      route: { coding: [{ system: 'http://snomed.info/sct', code: '26643006', display: 'Oral route' }] },
    });
  });
});
