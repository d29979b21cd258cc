// @vitest-environment jsdom
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ASYNC_JOB_PROGRESS_EXTENSION } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWithHearth } from '../../../../packages/react/src/test/render.js';
import { ReindexAction } from './ReindexAction.js';

const running = (done: number, total: number) => ({
  resourceType: 'AsyncJob',
  id: 'j1',
  status: 'active',
  extension: [
    {
      url: ASYNC_JOB_PROGRESS_EXTENSION,
      extension: [
        { url: 'fraction', valueDecimal: done / total },
        { url: 'message', valueString: `${done}/${total} resources (Patient)` },
        { url: 'done', valueInteger: done },
        { url: 'total', valueInteger: total },
      ],
    },
  ],
});

describe('ReindexAction', () => {
  it('starts the reindex as a job, draws its progress, and shows the counts per type at the end', async () => {
    const polls = [
      running(3, 10),
      {
        resourceType: 'AsyncJob',
        id: 'j1',
        status: 'completed',
        output: {
          resourceType: 'Parameters',
          parameter: [
            { name: 'total', valueInteger: 10 },
            {
              name: 'type',
              part: [
                { name: 'resourceType', valueCode: 'Patient' },
                { name: 'count', valueInteger: 10 },
              ],
            },
          ],
        },
      },
    ];
    const { client, requests } = mockClient({
      'POST /admin/super/reindex': () => ({ resourceType: 'AsyncJob', id: 'j1', status: 'accepted' }),
      'GET /fhir/R4/AsyncJob/j1': () => polls.shift() ?? polls[polls.length - 1],
    });
    renderWithHearth(<ReindexAction pollMs={20} />, client);
    fireEvent.change(screen.getByLabelText(/Resource types/), { target: { value: 'Patient' } });
    fireEvent.click(screen.getByRole('button', { name: 'Reindex resources' }));
    const status = await screen.findByRole('status', { name: 'Reindex progress' });
    await waitFor(() => expect(within(status).getByText(/3 of 10 resources/)).toBeTruthy());
    expect(within(status).getByText(/\(Patient\)/)).toBeTruthy();
    expect(await screen.findByText('Reindexed 10 resources.')).toBeTruthy();
    const perType = screen.getByRole('table', { name: 'Reindexed per type' });
    expect(within(perType).getByText('Patient')).toBeTruthy();
    const post = requests.find((r) => r.method === 'POST');
    expect(post?.body).toEqual({ resourceType: 'Patient' });
  });

  it('cancels a running job through its status URL, and says why a failed one failed', async () => {
    let cancelled = false;
    const { client, requests } = mockClient({
      'POST /admin/super/reindex': () => ({ resourceType: 'AsyncJob', id: 'j1', status: 'accepted' }),
      'GET /fhir/R4/AsyncJob/j1': () =>
        cancelled
          ? {
              resourceType: 'AsyncJob',
              id: 'j1',
              status: 'error',
              output: {
                resourceType: 'Parameters',
                parameter: [
                  {
                    name: 'outcome',
                    resource: { resourceType: 'OperationOutcome', issue: [{ details: { text: 'Disk full' } }] },
                  },
                ],
              },
            }
          : running(1, 4),
      'DELETE /fhir/R4/job/j1/status': () => {
        cancelled = true;
        return { resourceType: 'OperationOutcome', issue: [] };
      },
    });
    renderWithHearth(<ReindexAction pollMs={20} />, client);
    fireEvent.click(screen.getByRole('button', { name: 'Reindex resources' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel' }));
    expect(await screen.findByText('The reindex failed: Disk full')).toBeTruthy();
    expect(requests.some((r) => r.method === 'DELETE' && r.url.pathname === '/fhir/R4/job/j1/status')).toBe(true);
    const post = requests.find((r) => r.method === 'POST');
    expect(post?.body).toEqual({});
  });
});
