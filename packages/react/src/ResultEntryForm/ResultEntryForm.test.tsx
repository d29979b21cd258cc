// @vitest-environment jsdom
import {
  interpretText,
  interpretValue,
  type Bundle,
  type DiagnosticReport,
  type Observation,
  type ServiceRequest,
  type Task,
} from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { resultErrors, resultRows, resultTransaction } from './results.js';
import { ResultEntryForm } from './ResultEntryForm.js';

const order = (code: string, display: string): ServiceRequest => ({
  resourceType: 'ServiceRequest',
  id: 's1',
  meta: { versionId: '2' },
  status: 'active',
  intent: 'order',
  priority: 'urgent',
  code: { coding: [{ system: 'http://loinc.org', code, display }], text: display },
  subject: { reference: 'Patient/p1' },
  requester: { reference: 'Practitioner/dr', display: 'Dr Who' },
});
const BMP = order('24321-2', 'Basic metabolic 2000 panel - Serum or Plasma');

describe('interpretation', () => {
  it('flags H/L outside the range and HH/LL beyond the critical limits', () => {
    const potassium = { low: 3.5, high: 5.1, criticalLow: 2.8, criticalHigh: 6.2 };
    expect([2.5, 3.0, 4.2, 5.5, 6.8].map((v) => interpretValue(v, potassium))).toEqual(['LL', 'L', 'N', 'H', 'HH']);
    expect(interpretValue(250, { high: 199 })).toBe('H');
    expect(interpretValue(30, { low: 40 })).toBe('L');
    expect(interpretValue(5, {})).toBeUndefined();
    expect(interpretText('Negative', 'Negative')).toBe('N');
    expect(interpretText('2+', 'Negative')).toBe('A');
  });

  it("lists a panel's analytes with their ranges, or the ordered code alone when the catalogue lacks it", () => {
    expect(resultRows(BMP).map((r) => r.analyte.code)).toEqual([
      '2345-7',
      '3094-0',
      '2160-0',
      '2951-2',
      '2823-3',
      '2075-0',
      '2028-9',
      '17861-6',
    ]);
    expect(resultRows(order('99999-9', 'Something rare')).map((r) => r.analyte.label)).toEqual(['Something rare']);
    expect(resultErrors(resultRows(BMP))).toEqual({ '': 'Enter at least one result' });
  });

  it('records Observations, the report, the completed order and the review task in one transaction', () => {
    const rows = resultRows(BMP).map((r) =>
      r.analyte.code === '2823-3' ? { ...r, value: 6.8 } : r.analyte.code === '2951-2' ? { ...r, value: 140 } : r,
    );
    let n = 0;
    const tx = resultTransaction(
      rows,
      {
        order: BMP,
        performer: { reference: 'Practitioner/lab' },
        effective: '2026-01-02T08:00:00Z',
        issued: '2026-01-02T10:00:00Z',
      },
      () => `u${++n}`,
    );
    const resources = (tx.entry ?? []).map((e) => e.resource);
    expect(resources.map((r) => r?.resourceType)).toEqual([
      'Observation',
      'Observation',
      'DiagnosticReport',
      'ServiceRequest',
      'Task',
    ]);
    const potassium = resources[1] as Observation;
    expect(potassium).toMatchObject({
      status: 'final',
      code: { coding: [{ system: 'http://loinc.org', code: '2823-3' }] },
      basedOn: [{ reference: 'ServiceRequest/s1' }],
      valueQuantity: { value: 6.8, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
      interpretation: [{ coding: [{ code: 'HH', display: 'Critical high' }] }],
      referenceRange: [{ low: { value: 3.5 }, high: { value: 5.1 } }],
    });
    const report = resources[2] as DiagnosticReport;
    expect(report.result).toEqual([{ reference: 'urn:uuid:u1' }, { reference: 'urn:uuid:u2' }]);
    expect(report.basedOn).toEqual([{ reference: 'ServiceRequest/s1' }]);
    expect(tx.entry?.[3].request).toEqual({ method: 'PUT', url: 'ServiceRequest/s1', ifMatch: 'W/"2"' });
    expect((resources[3] as ServiceRequest).status).toBe('completed');
    expect(resources[4] as Task).toMatchObject({
      status: 'requested',
      owner: { reference: 'Practitioner/dr' },
      focus: { reference: 'urn:uuid:u3' },
      code: { coding: [{ system: 'https://hearth.dev/fhir/CodeSystem/lab-task', code: 'review-result' }] },
    });
  });
});

describe('ResultEntryForm', () => {
  it('flags a value as it is typed and saves the report', async () => {
    const user = userEvent.setup({ delay: null });
    const onSaved = vi.fn();
    const { client, requests } = mockClient({
      'POST /fhir/R4/': (req) => ({
        resourceType: 'Bundle',
        type: 'transaction-response',
        entry: ((req.body as Bundle).entry ?? []).map((e, i) => ({
          resource: { ...(e.resource as object), id: `r${i}` },
        })),
      }),
    });
    renderWithHearth(<ResultEntryForm order={BMP} onSaved={onSaved} />, client);
    await user.type(screen.getByLabelText('Potassium (mmol/L)'), '2.5');
    expect(within(screen.getByLabelText('Potassium flag')).getByText('LL · Critical low')).toBeTruthy();
    await user.clear(screen.getByLabelText('Potassium (mmol/L)'));
    await user.type(screen.getByLabelText('Potassium (mmol/L)'), '5.4');
    expect(within(screen.getByLabelText('Potassium flag')).getByText('H · High')).toBeTruthy();
    // The range is the lab's to correct: a wider one makes the value normal.
    await user.clear(screen.getByLabelText('Potassium high'));
    await user.type(screen.getByLabelText('Potassium high'), '5.5');
    expect(within(screen.getByLabelText('Potassium flag')).queryByText('H · High')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Save result' }));
    await waitFor(() => expect(onSaved).toHaveBeenCalled());
    const sent = requests.find((r) => r.method === 'POST')?.body as Bundle;
    const observation = sent.entry?.[0].resource as Observation;
    expect(observation.valueQuantity?.value).toBe(5.4);
    expect(observation.referenceRange?.[0].high?.value).toBe(5.5);
    expect(observation.interpretation?.[0].coding?.[0].code).toBe('N');
    expect((onSaved.mock.calls[0][0] as DiagnosticReport).resourceType).toBe('DiagnosticReport');
  });

  it('sends nothing for an order that is not active', async () => {
    const user = userEvent.setup({ delay: null });
    const { client, requests } = mockClient({});
    renderWithHearth(<ResultEntryForm order={{ ...BMP, status: 'draft' }} />, client);
    await user.type(screen.getByLabelText('Sodium (mmol/L)'), '140');
    await user.click(screen.getByRole('button', { name: 'Save result' }));
    expect(await screen.findByText(/only an active order takes a result/)).toBeTruthy();
    expect(requests).toHaveLength(0);
  });
});
