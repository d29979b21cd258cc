// @vitest-environment jsdom
import type { Task } from '@hearth/core';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, Reply, renderWithHearth, type Recorded } from '../test/render.js';
import { TaskWorklist } from './TaskWorklist.js';
import { loadWorklist } from './worklist.js';

const me = { reference: 'Practitioner/dr', display: 'Dr Ada Lovelace' };
const patient = { resourceType: 'Patient', id: 'p1', name: [{ given: ['Grace'], family: 'Hopper' }] };
const hour = 3_600_000;

function task(id: string, fields: Partial<Task>): Task {
  return {
    resourceType: 'Task',
    id,
    meta: { versionId: '1' },
    status: 'requested',
    intent: 'order',
    for: { reference: 'Patient/p1' },
    basedOn: [{ reference: 'CarePlan/cp1' }],
    ...fields,
  };
}

/** A Task search answer with the patient included, as the server sends it. */
function taskBundle(tasks: Task[]): object {
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    entry: [
      ...tasks.map((resource) => ({ resource, search: { mode: 'match' } })),
      ...(tasks.length ? [{ resource: patient, search: { mode: 'include' } }] : []),
    ],
  };
}

describe('TaskWorklist', () => {
  it("lists the practitioner's open tasks by due date, flags the overdue one and filters by due date", async () => {
    const user = userEvent.setup({ delay: null });
    const now = Date.now();
    const tasks = [
      task('later', {
        description: 'Foot exam',
        owner: me,
        restriction: { period: { end: new Date(now + 30 * 24 * hour).toISOString() } },
      }),
      task('undated', { description: 'Diet advice', owner: me }),
      task('late', {
        description: 'HbA1c',
        owner: me,
        restriction: { period: { end: new Date(now - 2 * 24 * hour).toISOString() } },
      }),
    ];
    const onOpenPatient = vi.fn();
    const onOpenPlan = vi.fn();
    const { client, requests } = mockClient({
      'GET /fhir/R4/PractitionerRole': () => bundle([]),
      'GET /fhir/R4/CareTeam': () => bundle([]),
      'GET /fhir/R4/Task': () => taskBundle(tasks),
    });
    renderWithHearth(<TaskWorklist practitioner={me} onOpenPatient={onOpenPatient} onOpenPlan={onOpenPlan} />, client);
    const list = await screen.findByRole('list', { name: 'Tasks' });
    const rows = within(list).getAllByRole('listitem');
    expect(rows.map((r) => r.getAttribute('aria-label'))).toEqual(['HbA1c', 'Foot exam', 'Diet advice']);
    expect(within(rows[0]).getByText('Overdue')).toBeTruthy();
    expect(within(rows[1]).queryByText('Overdue')).toBeNull();
    expect(within(rows[2]).getByText('No due date')).toBeTruthy();
    const search = requests.find((r) => r.url.pathname === '/fhir/R4/Task')?.url.searchParams;
    expect(search?.get('owner')).toBe('Practitioner/dr');
    expect(search?.get('status')).toBe('draft,requested,received,accepted,ready,in-progress,on-hold');
    expect(search?.get('_include')).toBe('Task:patient');

    await user.click(within(rows[0]).getByRole('button', { name: 'Grace Hopper' }));
    expect(onOpenPatient).toHaveBeenCalledWith('p1');
    await user.click(within(rows[0]).getByRole('button', { name: 'Care plan' }));
    expect(onOpenPlan).toHaveBeenCalledWith('cp1');

    await user.click(screen.getByRole('textbox', { name: 'Due' }));
    await user.click(await screen.findByRole('option', { name: 'Overdue' }));
    await waitFor(() =>
      expect(within(screen.getByRole('list', { name: 'Tasks' })).getAllByRole('listitem')).toHaveLength(1),
    );
    expect(screen.getByRole('listitem', { name: 'HbA1c' })).toBeTruthy();

    // Choosing statuses searches for those only.
    await user.click(screen.getByRole('textbox', { name: 'Status' }));
    await user.click(await screen.findByRole('option', { name: 'completed' }));
    await waitFor(() =>
      expect(
        requests
          .filter((r) => r.url.pathname === '/fhir/R4/Task')
          .at(-1)
          ?.url.searchParams.get('status'),
      ).toBe('completed'),
    );
  });

  it("lists the team's and unassigned tasks, and claims one with a conditional update", async () => {
    const user = userEvent.setup({ delay: null });
    let claimed: Task | undefined;
    const teamTask = task('t1', { description: 'Call the patient', owner: { reference: 'CareTeam/ct1' } });
    const free = task('t2', { description: 'Book eye exam' });
    const onChanged = vi.fn();
    const { client, requests } = mockClient({
      'GET /fhir/R4/PractitionerRole': () =>
        bundle([
          {
            resourceType: 'PractitionerRole',
            id: 'role1',
            organization: { reference: 'Organization/o1', display: 'Clinic' },
          },
        ]),
      'GET /fhir/R4/CareTeam': () =>
        bundle([{ resourceType: 'CareTeam', id: 'ct1', status: 'active', name: 'Diabetes team' }]),
      'GET /fhir/R4/Task': (req: Recorded) => {
        if (req.url.searchParams.get('owner:missing') === 'true') return taskBundle(claimed ? [] : [free]);
        if (req.url.searchParams.get('owner') === 'Practitioner/dr') return taskBundle(claimed ? [claimed] : []);
        return taskBundle([teamTask]);
      },
      'GET /fhir/R4/CareTeam/ct1': () => ({ resourceType: 'CareTeam', id: 'ct1', name: 'Diabetes team' }),
      'PUT /fhir/R4/Task/t2': (req: Recorded) => {
        claimed = { ...(req.body as Task), meta: { versionId: '2' } };
        return claimed;
      },
    });
    renderWithHearth(<TaskWorklist practitioner={me} onChanged={onChanged} />, client);
    await screen.findByText('No task matches.');
    await user.click(screen.getByRole('radio', { name: "My team's tasks" }));
    await screen.findByText('Teams: My role at Clinic, Clinic, Diabetes team, and unassigned tasks');
    const free2 = await screen.findByRole('listitem', { name: 'Book eye exam' });
    expect(within(free2).getByText('unassigned')).toBeTruthy();
    expect(screen.getByRole('listitem', { name: 'Call the patient' })).toBeTruthy();
    const teamSearch = requests.find(
      (r) => r.url.pathname === '/fhir/R4/Task' && r.url.searchParams.get('owner')?.includes('CareTeam'),
    );
    expect(teamSearch?.url.searchParams.get('owner')).toBe('PractitionerRole/role1,Organization/o1,CareTeam/ct1');
    const careTeams = requests.find((r) => r.url.pathname === '/fhir/R4/CareTeam');
    expect(careTeams?.url.searchParams.get('participant')).toBe('Practitioner/dr,PractitionerRole/role1');

    await user.click(within(free2).getByRole('button', { name: 'Claim' }));
    await waitFor(() => expect(onChanged).toHaveBeenCalled());
    const put = requests.find((r) => r.method === 'PUT');
    expect(put?.headers.get('If-Match')).toBe('W/"1"');
    expect(put?.body).toMatchObject({ owner: me, status: 'accepted', lastModified: expect.any(String) });
    expect((put?.body as Task).meta).toBeUndefined();
    await waitFor(() => expect(screen.queryByRole('listitem', { name: 'Book eye exam' })).toBeNull());
    await user.click(screen.getByRole('radio', { name: 'My tasks' }));
    const mine = await screen.findByRole('listitem', { name: 'Book eye exam' });
    expect(within(mine).getByRole('button', { name: 'Start' })).toBeTruthy();
    expect(within(mine).queryByRole('button', { name: 'Claim' })).toBeNull();
  });

  it('tells who won when someone else claimed the task first (412), and shows the task as it is', async () => {
    const user = userEvent.setup({ delay: null });
    const free = task('t2', { description: 'Book eye exam' });
    // The winner's owner has no display: its name is read.
    const won: Task = {
      ...free,
      meta: { versionId: '2' },
      status: 'accepted',
      owner: { reference: 'Practitioner/other' },
    };
    let lost = false;
    const { client } = mockClient({
      'GET /fhir/R4/Task': (req: Recorded) =>
        req.url.searchParams.get('owner:missing') === 'true' ? taskBundle(lost ? [] : [free]) : taskBundle([]),
      'PUT /fhir/R4/Task/t2': () => {
        lost = true;
        return new Reply(412, {
          resourceType: 'OperationOutcome',
          issue: [
            {
              severity: 'error',
              code: 'conflict',
              details: { text: 'Version 1 is not the current version of Task/t2' },
            },
          ],
        });
      },
      'GET /fhir/R4/Task/t2': () => won,
      'GET /fhir/R4/Practitioner/other': () => ({
        resourceType: 'Practitioner',
        id: 'other',
        name: [{ given: ['Bob'], prefix: ['Dr'] }],
      }),
    });
    renderWithHearth(<TaskWorklist practitioner={me} teams={[]} />, client);
    await user.click(await screen.findByRole('radio', { name: "My team's tasks" }));
    const row = await screen.findByRole('listitem', { name: 'Book eye exam' });
    await user.click(within(row).getByRole('button', { name: 'Claim' }));
    const alert = await screen.findByText(
      'Someone else changed this task first: it is now accepted, owned by Dr Bob. The list shows it as it is now.',
    );
    expect(alert.getAttribute('role')).toBe('alert');
    await screen.findByText('No task matches.');
  });

  it('starts, completes, and cancels with a reason', async () => {
    const user = userEvent.setup({ delay: null });
    const stored = new Map<string, Task>([
      ['a', task('a', { description: 'Foot exam', owner: me, status: 'accepted' })],
      ['b', task('b', { description: 'Eye exam', owner: me, status: 'in-progress' })],
      ['c', task('c', { description: 'Diet advice', owner: me })],
    ]);
    const puts: Recorded[] = [];
    const { client } = mockClient({
      'GET /fhir/R4/Task': () =>
        taskBundle([...stored.values()].filter((t) => t.status !== 'completed' && t.status !== 'cancelled')),
      'PUT /fhir/R4/Task/*': (req: Recorded) => {
        puts.push(req);
        const next = { ...(req.body as Task), meta: { versionId: '2' } };
        stored.set(next.id as string, next);
        return next;
      },
    });
    renderWithHearth(<TaskWorklist practitioner={me} teams={[]} />, client);
    const foot = await screen.findByRole('listitem', { name: 'Foot exam' });
    await user.click(within(foot).getByRole('button', { name: 'Start' }));
    await waitFor(() =>
      expect(screen.getByRole('listitem', { name: 'Foot exam' }).textContent).toContain('in-progress'),
    );
    expect(puts[0].body).toMatchObject({ status: 'in-progress', executionPeriod: { start: expect.any(String) } });
    expect(
      within(screen.getByRole('listitem', { name: 'Foot exam' })).queryByRole('button', { name: 'Start' }),
    ).toBeNull();

    await user.click(
      within(screen.getByRole('listitem', { name: 'Eye exam' })).getByRole('button', { name: 'Complete' }),
    );
    await waitFor(() => expect(screen.queryByRole('listitem', { name: 'Eye exam' })).toBeNull());
    expect(puts[1].body).toMatchObject({ status: 'completed', executionPeriod: { end: expect.any(String) } });

    const diet = screen.getByRole('listitem', { name: 'Diet advice' });
    await user.click(within(diet).getByRole('button', { name: 'Cancel task' }));
    const form = within(diet).getByRole('form', { name: 'Cancel Diet advice' });
    await user.click(within(form).getByRole('button', { name: 'Confirm cancel' }));
    expect(await within(diet).findByText('Give a reason for cancelling the task')).toBeTruthy();
    expect(puts).toHaveLength(2);
    await user.type(
      within(form).getByRole('textbox', { name: 'Reason for cancelling' }),
      'Seen by dietitian elsewhere',
    );
    await user.click(within(form).getByRole('button', { name: 'Confirm cancel' }));
    await waitFor(() => expect(screen.queryByRole('listitem', { name: 'Diet advice' })).toBeNull());
    expect(puts[2].body).toMatchObject({ status: 'cancelled', statusReason: { text: 'Seen by dietitian elsewhere' } });
    expect(puts[2].headers.get('If-Match')).toBe('W/"1"');
  });

  it('follows next pages up to five, and says when more tasks matched', async () => {
    let pages = 0;
    const { client } = mockClient({
      'GET /fhir/R4/Task': () => {
        pages++;
        return {
          ...(taskBundle([task(`p${pages}`, { owner: me })]) as object),
          link: [{ relation: 'next', url: `http://test.local/fhir/R4/Task?page=${pages + 1}` }],
        };
      },
    });
    const list = await loadWorklist(client, { scope: 'mine', practitioner: me, teams: [], statuses: [] });
    expect(list.map((i) => i.task.id)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    expect(list[0].patient?.id).toBe('p1');
    expect(list.truncated).toBe(true);
  });
});
