// @vitest-environment jsdom
import type { Observation } from '@hearth/core';
import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { groupByCode, ObservationChart } from './ObservationChart.js';

const loinc = (code: string, display: string) => ({
  coding: [{ system: 'http://loinc.org', code, display }],
  text: display,
});
const weight = (day: string, value: number): Observation => ({
  resourceType: 'Observation',
  status: 'final',
  code: loinc('29463-7', 'Body weight'),
  effectiveDateTime: `${day}T08:00:00Z`,
  valueQuantity: { value, unit: 'kg' },
  referenceRange: [{ low: { value: 60 }, high: { value: 80 } }],
});
const bp = (day: string, sys: number, dia: number): Observation => ({
  resourceType: 'Observation',
  status: 'final',
  code: loinc('85354-9', 'Blood pressure'),
  effectiveDateTime: `${day}T08:00:00Z`,
  component: [
    { code: loinc('8480-6', 'Systolic'), valueQuantity: { value: sys, unit: 'mmHg' } },
    { code: loinc('8462-4', 'Diastolic'), valueQuantity: { value: dia, unit: 'mmHg' } },
  ],
});

describe('ObservationChart', () => {
  it('plots values over time with the unit and the reference range', () => {
    const { client } = mockClient({});
    renderWithHearth(
      <ObservationChart
        observations={[weight('2024-02-01', 71), weight('2024-01-01', 70.5), weight('2024-03-01', 72)]}
        width={500}
      />,
      client,
    );
    const figure = screen.getByRole('figure', { name: 'Body weight chart' });
    expect(within(figure).getByText('Latest: Body weight: 72 kg')).toBeTruthy();
    expect(figure.querySelectorAll('.recharts-line-dot')).toHaveLength(3);
    expect(figure.querySelectorAll('.recharts-reference-area')).toHaveLength(1);
    expect(within(figure).getByText('kg')).toBeTruthy();
  });

  it('draws one line per component (blood pressure)', () => {
    const { client } = mockClient({});
    renderWithHearth(
      <ObservationChart observations={[bp('2024-01-01', 120, 80), bp('2024-01-02', 130, 85)]} width={500} />,
      client,
    );
    const figure = screen.getByRole('figure', { name: 'Blood pressure chart' });
    expect(figure.querySelectorAll('.recharts-line')).toHaveLength(2);
    expect(within(figure).getByText('Latest: Systolic: 130 mmHg; Diastolic: 85 mmHg')).toBeTruthy();
  });

  it('groups observations by code', () => {
    const groups = groupByCode([weight('2024-01-01', 70), bp('2024-01-01', 120, 80), weight('2024-01-02', 71)]);
    expect(groups.map((g) => [g.code, g.observations.length])).toEqual([
      ['http://loinc.org|29463-7', 2],
      ['http://loinc.org|85354-9', 1],
    ]);
  });
});
