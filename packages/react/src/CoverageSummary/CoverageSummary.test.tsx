// @vitest-environment jsdom
import type { Coverage } from '@hearth/core';
import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { bundle, mockClient, renderWithHearth } from '../test/render.js';
import { CoverageSummary } from './CoverageSummary.js';

const coverage = (id: string, extra: Partial<Coverage>): Coverage => ({
  resourceType: 'Coverage',
  id,
  status: 'active',
  beneficiary: { reference: 'Patient/p1' },
  payor: [{ reference: 'Organization/acme' }],
  ...extra,
});

describe('CoverageSummary', () => {
  it('shows the coverage in force on the day: payer, member id and period, the lowest order first', async () => {
    const { client, requests } = mockClient({
      'GET /fhir/R4/Coverage': () =>
        bundle([
          coverage('old', { subscriberId: 'OLD1', period: { start: '2020-01-01', end: '2020-12-31' } }),
          coverage('second', { subscriberId: 'SEC2', order: 2 }),
          coverage('first', { subscriberId: 'W123', order: 1, period: { start: '2025-01-01', end: '2025-12-31' } }),
          { resourceType: 'Organization', id: 'acme', name: 'Acme Health' },
        ]),
    });
    renderWithHearth(<CoverageSummary patientId="p1" day="2025-03-14" />, client);
    const note = await screen.findByRole('note', { name: 'Coverage' });
    expect(note.textContent).toMatch(/^Coverage: Acme Health · Member W123 · .*2025 – .*2025$/);
    const query = requests[0].url.searchParams;
    expect(query.get('beneficiary')).toBe('Patient/p1');
    expect(query.get('status')).toBe('active');
    expect(query.get('_include')).toBe('Coverage:payor');
  });

  it('says there is no active coverage when none is in force', async () => {
    const { client } = mockClient({
      'GET /fhir/R4/Coverage': () => bundle([coverage('old', { period: { end: '2020-12-31' } })]),
    });
    renderWithHearth(<CoverageSummary patientId="p1" day="2025-03-14" />, client);
    expect((await screen.findByRole('note', { name: 'Coverage' })).textContent).toBe('No active coverage');
  });
});
