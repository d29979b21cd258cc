// @vitest-environment jsdom
import type { Bundle, Observation } from '@hearth/core';
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { DiagnosticReportView } from './DiagnosticReportView.js';
import { previousResult } from './report.js';

const H = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
const obs = (
  id: string,
  code: string,
  text: string,
  value: number,
  unit: string,
  when: string,
  flag?: string,
): Observation => ({
  resourceType: 'Observation',
  id,
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code }], text },
  subject: { reference: 'Patient/p1' },
  effectiveDateTime: when,
  valueQuantity: { value, unit, system: 'http://unitsofmeasure.org', code: unit },
  interpretation: flag ? [{ coding: [{ system: H, code: flag }] }] : undefined,
  referenceRange: [{ low: { value: 3.5 }, high: { value: 5.1 } }],
});

const potassium = obs('k2', '2823-3', 'Potassium', 6.8, 'mmol/L', '2026-02-01T08:00:00Z', 'HH');
const sodium = obs('na2', '2951-2', 'Sodium', 140, 'mmol/L', '2026-02-01T08:00:00Z', 'N');
const earlierK = obs('k1', '2823-3', 'Potassium', 4.1, 'mmol/L', '2025-11-01T08:00:00Z', 'N');

describe('previous results', () => {
  it('finds the result taken just before, and the change in the same unit', () => {
    const older = obs('k0', '2823-3', 'Potassium', 3.9, 'mmol/L', '2025-01-01T08:00:00Z');
    expect(previousResult(potassium, [potassium, older, earlierK])).toEqual({ previous: earlierK, change: 2.7 });
    expect(previousResult(earlierK, [potassium, earlierK])).toEqual({ previous: undefined, change: undefined });
    const other = { ...earlierK, valueQuantity: { value: 16, unit: 'mg/dL', code: 'mg/dL' } };
    expect(previousResult(potassium, [other]).change).toBeUndefined();
  });
});

describe('DiagnosticReportView', () => {
  it('highlights flags, shows previous values and changes, and charts each analyte', async () => {
    const { client, requests } = mockClient({
      'GET /fhir/R4/DiagnosticReport': () =>
        bundle([
          {
            resourceType: 'DiagnosticReport',
            id: 'r1',
            status: 'final',
            code: { text: 'Basic metabolic panel' },
            subject: { reference: 'Patient/p1' },
            effectiveDateTime: '2026-02-01T08:00:00Z',
            issued: '2026-02-01T10:00:00Z',
            result: [{ reference: 'Observation/k2' }, { reference: 'Observation/na2' }],
          },
          potassium,
          sodium,
        ]),
      'POST /fhir/R4/': (req) => ({
        resourceType: 'Bundle',
        type: 'batch-response',
        entry: ((req.body as Bundle).entry ?? []).map((e) => ({
          resource: bundle(e.request?.url.includes('2823-3') ? [potassium, earlierK] : [sodium]),
        })),
      }),
    });
    renderWithHearth(<DiagnosticReportView reportId="r1" />, client);
    const table = await screen.findByRole('table', { name: 'Results' });
    const rows = within(table).getAllByRole('row');
    const k = rows.find((r) => r.textContent?.includes('Potassium')) as HTMLElement;
    expect(k.getAttribute('data-flag')).toBe('HH');
    expect(within(k).getByText('HH · Critical high')).toBeTruthy();
    expect(within(k).getByText(/^4.1 mmol\/L/)).toBeTruthy();
    expect(within(k).getByText('+2.7')).toBeTruthy();
    const na = rows.find((r) => r.textContent?.includes('Sodium')) as HTMLElement;
    expect(within(na).getByText('none')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toContain('Potassium 6.8 mmol/L');
    expect(screen.getByRole('figure', { name: 'Potassium chart' })).toBeTruthy();
    expect(screen.getByRole('figure', { name: 'Sodium chart' })).toBeTruthy();
    const batch = requests.find((r) => r.method === 'POST')?.body as Bundle;
    expect(batch.entry?.map((e) => decodeURIComponent(e.request?.url ?? ''))).toEqual([
      'Observation?subject=Patient/p1&code=http://loinc.org|2823-3&_sort=-date&_count=50',
      'Observation?subject=Patient/p1&code=http://loinc.org|2951-2&_sort=-date&_count=50',
    ]);
  });
});
