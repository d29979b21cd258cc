// @vitest-environment jsdom
import type { Task } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { ResultsInbox } from './ResultsInbox.js';

const task: Task = {
  resourceType: 'Task',
  id: 't1',
  meta: { versionId: '1' },
  status: 'requested',
  intent: 'order',
  code: { coding: [{ system: 'https://hearth.dev/fhir/CodeSystem/lab-task', code: 'review-result' }] },
  focus: { reference: 'DiagnosticReport/r1' },
  for: { reference: 'Patient/p1' },
  owner: { reference: 'Practitioner/dr' },
};

describe('ResultsInbox', () => {
  it("lists the practitioner's unreviewed reports with their flags, and acknowledges one", async () => {
    const user = userEvent.setup({ delay: null });
    let done = false;
    const onOpen = vi.fn();
    const onAcknowledged = vi.fn();
    const { client, requests } = mockClient({
      'GET /fhir/R4/Task': () => ({
        resourceType: 'Bundle',
        type: 'searchset',
        entry: done
          ? []
          : [
              { resource: task, search: { mode: 'match' } },
              {
                resource: {
                  resourceType: 'DiagnosticReport',
                  id: 'r1',
                  status: 'final',
                  code: { text: 'Lipid panel' },
                  issued: '2026-02-01T10:00:00Z',
                  result: [{ reference: 'Observation/o1' }, { reference: 'Observation/o2' }],
                },
                search: { mode: 'include' },
              },
              {
                resource: { resourceType: 'Patient', id: 'p1', name: [{ given: ['Ada'], family: 'Lovelace' }] },
                search: { mode: 'include' },
              },
              {
                resource: {
                  resourceType: 'Observation',
                  id: 'o1',
                  status: 'final',
                  code: { text: 'Cholesterol, total' },
                  valueQuantity: { value: 262, unit: 'mg/dL' },
                  interpretation: [
                    {
                      coding: [
                        { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code: 'H' },
                      ],
                    },
                  ],
                },
                search: { mode: 'include' },
              },
              {
                resource: {
                  resourceType: 'Observation',
                  id: 'o2',
                  status: 'final',
                  code: { text: 'HDL cholesterol' },
                  valueQuantity: { value: 52, unit: 'mg/dL' },
                  interpretation: [
                    {
                      coding: [
                        { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code: 'N' },
                      ],
                    },
                  ],
                },
                search: { mode: 'include' },
              },
            ],
      }),
      'PUT /fhir/R4/Task/t1': (req) => {
        done = true;
        return { ...(req.body as object), meta: { versionId: '2' } };
      },
    });
    renderWithHearth(
      <ResultsInbox practitioner={{ reference: 'Practitioner/dr' }} onOpen={onOpen} onAcknowledged={onAcknowledged} />,
      client,
    );
    const item = await screen.findByRole('listitem', { name: 'Lipid panel for Ada Lovelace' });
    expect(within(item).getByText('Abnormal')).toBeTruthy();
    expect(within(item).getByText('H · High')).toBeTruthy();
    expect(within(item).getByText('Cholesterol, total 262 mg/dL')).toBeTruthy();
    expect(within(item).queryByText(/HDL/)).toBeNull();
    const search = requests[0].url.searchParams;
    expect(search.get('owner')).toBe('Practitioner/dr');
    expect(search.get('code')).toBe('https://hearth.dev/fhir/CodeSystem/lab-task|review-result');
    expect(search.getAll('_include')).toEqual(['Task:focus', 'Task:patient']);
    expect(search.get('_include:iterate')).toBe('DiagnosticReport:result');
    await user.click(within(item).getByRole('button', { name: 'Open report' }));
    expect(onOpen).toHaveBeenCalledWith('r1');
    await user.click(within(item).getByRole('button', { name: 'Acknowledge' }));
    await screen.findByText('No result awaits your review.');
    const put = requests.find((r) => r.method === 'PUT');
    expect(put?.body).toMatchObject({ status: 'completed', executionPeriod: { end: expect.any(String) } });
    await waitFor(() => expect(onAcknowledged).toHaveBeenCalled());
  });
});
