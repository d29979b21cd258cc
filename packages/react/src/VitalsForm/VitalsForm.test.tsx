// @vitest-environment jsdom
import type { Bundle, Observation } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { computeBmi, vitalErrors, vitalsTransaction } from './vitals.js';
import { VitalsForm } from './VitalsForm.js';

const context = {
  subject: { reference: 'Patient/p1' },
  encounter: { reference: 'Encounter/e1' },
  effective: '2024-05-01T10:00:00Z',
};

describe('vital signs', () => {
  it('computes BMI from height and weight', () => {
    expect(computeBmi(180, 81)).toBe(25);
    expect(computeBmi(165, 70.3)).toBe(25.8);
    expect(computeBmi(undefined, 70)).toBeUndefined();
  });

  it('refuses implausible values and half a blood pressure', () => {
    expect(vitalErrors({ height: 1800, systolic: 120 })).toEqual({
      height: 'Height must be between 20 and 260 cm',
      diastolic: 'Enter both blood pressure values',
    });
    expect(vitalErrors({ height: 180, systolic: 120, diastolic: 80 })).toEqual({});
  });

  it('builds LOINC-coded Observations with UCUM units, a blood pressure panel, and BMI derived from its inputs', () => {
    let n = 0;
    const bundle = vitalsTransaction(
      { height: 180, weight: 81, systolic: 120, diastolic: 80, temperature: 37.2 },
      context,
      () => `id-${++n}`,
    );
    const resources = (bundle.entry ?? []).map((e) => e.resource as Observation);
    expect(bundle.type).toBe('transaction');
    expect(resources.map((o) => o.code.coding?.[0]?.code)).toEqual([
      '8302-2',
      '29463-7',
      '8310-5',
      '85354-9',
      '39156-5',
    ]);
    for (const o of resources) {
      expect(o.category?.[0]?.coding?.[0]?.code).toBe('vital-signs');
      expect(o.subject?.reference).toBe('Patient/p1');
      expect(o.encounter?.reference).toBe('Encounter/e1');
    }
    expect(resources[0].valueQuantity).toEqual({
      value: 180,
      unit: 'cm',
      system: 'http://unitsofmeasure.org',
      code: 'cm',
    });
    expect(resources[2].valueQuantity?.code).toBe('Cel');
    expect(
      resources[3].component?.map((c) => [c.code.coding?.[0]?.code, c.valueQuantity?.value, c.valueQuantity?.code]),
    ).toEqual([
      ['8480-6', 120, 'mm[Hg]'],
      ['8462-4', 80, 'mm[Hg]'],
    ]);
    expect(resources[4].valueQuantity).toMatchObject({ value: 25, code: 'kg/m2' });
    expect(resources[4].derivedFrom).toEqual([{ reference: 'urn:uuid:id-1' }, { reference: 'urn:uuid:id-2' }]);
    expect(bundle.entry?.[0].fullUrl).toBe('urn:uuid:id-1');
  });
});

describe('VitalsForm', () => {
  it('shows BMI as height and weight are typed and stores the signs in one transaction', async () => {
    const user = userEvent.setup({ delay: null });
    const onSaved = vi.fn();
    const { client, requests } = mockClient({
      'POST /fhir/R4/': (req) => ({
        resourceType: 'Bundle',
        type: 'transaction-response',
        entry: ((req.body as Bundle).entry ?? []).map((e, i) => ({
          response: { status: '201 Created' },
          resource: { ...(e.resource as object), id: `o${i}` },
        })),
      }),
    });
    renderWithHearth(<VitalsForm {...context} onSaved={onSaved} />, client);
    expect(screen.getByRole('status', { name: 'Body mass index' }).textContent).toBe('BMI: needs height and weight');
    await user.type(screen.getByLabelText('Height (cm)'), '180');
    await user.type(screen.getByLabelText('Weight (kg)'), '81');
    expect(screen.getByRole('status', { name: 'Body mass index' }).textContent).toBe('BMI: 25 kg/m2');
    await user.type(screen.getByLabelText('Heart rate (/min)'), '72');
    await user.click(screen.getByRole('button', { name: 'Save vital signs' }));
    await waitFor(() => expect(onSaved).toHaveBeenCalled());
    const sent = requests.find((r) => r.method === 'POST')?.body as Bundle;
    expect(sent.entry?.map((e) => (e.resource as Observation).code.coding?.[0]?.code)).toEqual([
      '8302-2',
      '29463-7',
      '8867-4',
      '39156-5',
    ]);
    expect((onSaved.mock.calls[0][0] as Observation[]).map((o) => o.id)).toEqual(['o0', 'o1', 'o2', 'o3']);
    await waitFor(() => expect((screen.getByLabelText('Height (cm)') as HTMLInputElement).value).toBe(''));
  });

  it('sends nothing while a value is implausible', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({});
    renderWithHearth(<VitalsForm {...context} />, client);
    await user.type(screen.getByLabelText('Height (cm)'), '1800');
    await user.click(screen.getByRole('button', { name: 'Save vital signs' }));
    expect(screen.getByText('Height must be between 20 and 260 cm')).toBeTruthy();
    expect(requests).toHaveLength(0);
  });
});
