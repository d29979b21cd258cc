// @vitest-environment jsdom
import type { Bundle, Resource } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWithHearth, type Recorded } from '../test/render.js';
import { PatientTimeline } from './PatientTimeline.js';
import { entryDate, TimelinePager } from './timeline-pager.js';

const subject = { reference: 'Patient/p1' };
const vital = (id: string, day: string, value: number): Resource => ({
  resourceType: 'Observation',
  id,
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }], text: 'Heart rate' },
  subject,
  effectiveDateTime: `${day}T09:00:00Z`,
  valueQuantity: { value, unit: '/min' },
  referenceRange: [{ high: { value: 100 } }],
});
const problem = (id: string, day: string, text: string): Resource => ({
  resourceType: 'Condition',
  id,
  subject,
  code: { text },
  clinicalStatus: { coding: [{ code: 'active', display: 'Active' }] },
  recordedDate: day,
});
const visit = (id: string, day: string): Resource => ({
  resourceType: 'Encounter',
  id,
  status: 'finished',
  class: { code: 'AMB', display: 'ambulatory' },
  type: [{ text: 'Check-up' }],
  subject,
  period: { start: `${day}T08:00:00Z`, end: `${day}T08:30:00Z` },
});

const RECORD = [
  vital('o1', '2024-01-01', 70),
  vital('o2', '2024-03-01', 72),
  vital('o3', '2024-05-01', 130),
  problem('c1', '2024-02-01', 'Asthma'),
  problem('c2', '2024-06-01', 'Hypertension'),
  visit('e1', '2024-04-01'),
];
const DATES: Record<string, string> = {
  Observation: 'Observation.effective',
  Condition: 'Condition.recordedDate',
  Encounter: 'Encounter.period',
};

/** A server's batch endpoint over RECORD: type searches by compartment, newest first, paged by offset. */
function fakeServer(record: Resource[]) {
  return {
    'POST /fhir/R4/': (req: Recorded) => {
      const batch = req.body as Bundle;
      return {
        resourceType: 'Bundle',
        type: 'batch-response',
        entry: (batch.entry ?? []).map((e) => {
          const url = new URL(e.request?.url ?? '', 'http://test.local/fhir/R4/');
          const type = url.pathname.split('/').pop() as string;
          const q = url.searchParams;
          const source = { type, expression: DATES[type] };
          const ge = q
            .getAll(q.get('_sort')?.slice(1) ?? '')
            .find((v) => v.startsWith('ge'))
            ?.slice(2);
          const matches = record
            .filter((r) => r.resourceType === type && q.get('_compartment') === 'Patient/p1')
            .filter((r) => !ge || (entryDate(r, source) ?? '') >= ge)
            .sort((a, b) => (entryDate(b, source) ?? '').localeCompare(entryDate(a, source) ?? ''));
          const count = Number(q.get('_count'));
          const offset = Number(q.get('_offset') ?? 0);
          const page = q.get('_summary') === 'count' ? [] : matches.slice(offset, offset + count);
          const more = q.get('_summary') !== 'count' && offset + count < matches.length;
          q.set('_offset', String(offset + count));
          return {
            response: { status: '200 OK' },
            resource: {
              resourceType: 'Bundle',
              type: 'searchset',
              total: matches.length,
              link: more ? [{ relation: 'next', url: `http://test.local/fhir/R4/${type}?${q.toString()}` }] : [],
              entry: page.map((resource) => ({ resource, search: { mode: 'match' } })),
            },
          };
        }),
      };
    },
  };
}

describe('TimelinePager', () => {
  it('merges the types newest first, a page at a time, following each type next link', async () => {
    const { client, requests } = mockClient(fakeServer(RECORD));
    const sources = Object.entries(DATES).map(([type, expression]) => ({ type, date: 'date', expression }));
    const pager = new TimelinePager(client, 'p1', sources, {}, 2);
    const ids: string[][] = [];
    while (pager.hasMore) ids.push((await pager.nextPage()).map((e) => e.resource.id as string));
    expect(ids.filter((p) => p.length)).toEqual([
      ['c2', 'o3'],
      ['e1', 'o2'],
      ['c1', 'o1'],
    ]);
    // Every type searched by its compartment, newest first, and the later pages through the next links.
    const urls = requests.flatMap((r) => ((r.body as Bundle).entry ?? []).map((e) => e.request?.url));
    expect(urls).toContain('Observation?_compartment=Patient%2Fp1&_sort=-date&_count=2');
    expect(urls.some((u) => u?.startsWith('Observation?') && u.includes('_offset=2'))).toBe(true);
  });

  it('keeps only the chosen types and dates', async () => {
    const { client } = mockClient(fakeServer(RECORD));
    const sources = Object.entries(DATES).map(([type, expression]) => ({ type, date: 'date', expression }));
    const pager = new TimelinePager(client, 'p1', sources, { types: ['Observation'], from: '2024-02-15' }, 10);
    expect((await pager.nextPage()).map((e) => e.resource.id)).toEqual(['o3', 'o2']);
    expect(pager.hasMore).toBe(false);
  });
});

describe('PatientTimeline', () => {
  it('shows the record newest first, described for people, with counts per type and paging', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient(fakeServer(RECORD));
    renderWithHearth(<PatientTimeline patientId="p1" pageSize={4} />, client);
    const root = await screen.findByLabelText('Patient timeline');
    await within(root).findByText('Hypertension');
    expect(screen.getByRole('status').textContent).toBe('Showing 4 of 6');
    // The newest first; values with units and flags, not JSON.
    const text = root.textContent ?? '';
    expect(text.indexOf('Hypertension')).toBeLessThan(text.indexOf('130 /min'));
    expect(text.indexOf('130 /min')).toBeLessThan(text.indexOf('Check-up'));
    expect(within(root).getByText('High')).toBeTruthy();
    expect(text).not.toContain('{');
    await user.click(screen.getByRole('button', { name: 'Show more' }));
    await within(root).findByText('Asthma');
    expect(screen.getByRole('status').textContent).toBe('Showing 6 of 6');
    expect(screen.queryByRole('button', { name: 'Show more' })).toBeNull();
  });

  it('filters by type, offering each type with its count', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient(fakeServer(RECORD));
    renderWithHearth(<PatientTimeline patientId="p1" />, client);
    await screen.findByText('Hypertension');
    await user.click(screen.getByRole('textbox', { name: 'Types' }));
    await user.click(await screen.findByRole('option', { name: 'Encounter (1)' }));
    await waitFor(() => expect(screen.queryByText('Hypertension')).toBeNull());
    expect(screen.getByText('Check-up')).toBeTruthy();
    expect(screen.getByRole('status').textContent).toBe('Showing 1 of 1');
  });
});
