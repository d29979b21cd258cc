// @vitest-environment jsdom
import type { CarePlan, Goal, Task } from '@hearth/core';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth, type Recorded } from '../test/render.js';
import { CarePlanView } from './CarePlanView.js';
import { periodText, planProgress } from './careplan.js';

const plan: CarePlan = {
  resourceType: 'CarePlan',
  id: 'cp1',
  status: 'active',
  intent: 'plan',
  title: 'Diabetes follow-up',
  description: 'Quarterly review',
  subject: { reference: 'Patient/p1' },
  period: { start: '2026-03-02T09:00:00Z' },
  goal: [{ reference: 'Goal/g1' }],
  activity: [
    { reference: { reference: 'Task/t1' } },
    { reference: { reference: 'Task/t2' } },
    { reference: { reference: 'RequestGroup/rg1' } },
  ],
};
const goal: Goal = {
  resourceType: 'Goal',
  id: 'g1',
  lifecycleStatus: 'active',
  achievementStatus: { text: 'In progress' },
  description: { text: 'HbA1c below 7%' },
  subject: { reference: 'Patient/p1' },
  startDate: '2026-03-02',
  target: [
    {
      measure: { text: 'HbA1c' },
      detailQuantity: { comparator: '<', value: 7, unit: '%' },
      dueDate: '2026-06-01',
    },
  ],
};
const t = (id: string, status: Task['status'], due?: string, description = id): Task => ({
  resourceType: 'Task',
  id,
  status,
  intent: 'order',
  description,
  basedOn: [{ reference: 'CarePlan/cp1' }],
  restriction: due ? { period: { end: due } } : undefined,
});

describe('CarePlanView', () => {
  it('shows the plan, its goals with targets, its activities and progress by week', async () => {
    const user = userEvent.setup({ delay: null });
    const onOpenTasks = vi.fn();
    const { client, requests } = mockClient({
      'GET /fhir/R4/CarePlan': () => ({
        resourceType: 'Bundle',
        type: 'searchset',
        entry: [
          { resource: plan, search: { mode: 'match' } },
          { resource: goal, search: { mode: 'include' } },
          { resource: t('t1', 'completed', '2026-03-03T09:00:00Z', 'Order HbA1c'), search: { mode: 'include' } },
          { resource: t('t2', 'requested', '2026-03-05T09:00:00Z', 'Foot exam'), search: { mode: 'include' } },
        ],
      }),
      'GET /fhir/R4/RequestGroup': () =>
        bundle([
          {
            resourceType: 'RequestGroup',
            id: 'rg1',
            status: 'active',
            intent: 'plan',
            code: { text: 'Education' },
            action: [{ title: 'Education', action: [{ resource: { reference: 'Task/t3' } }] }],
          },
        ]),
      'GET /fhir/R4/Task': (req: Recorded) => {
        expect(req.url.searchParams.get('_id')).toBe('t3');
        return bundle([t('t3', 'cancelled', '2026-03-12T09:00:00Z', 'Diet class')]);
      },
    });
    renderWithHearth(<CarePlanView carePlanId="cp1" onOpenTasks={onOpenTasks} chartWidth={500} />, client);
    expect(await screen.findByRole('heading', { name: 'Diabetes follow-up' })).toBeTruthy();
    expect(screen.getByText('Quarterly review')).toBeTruthy();
    const search = requests[0].url.searchParams;
    expect(search.get('_id')).toBe('cp1');
    expect(search.get('_include')).toBe('CarePlan:goal');
    expect(search.get('_revinclude')).toBe('Task:based-on');

    const goalCard = screen.getByRole('listitem', { name: 'HbA1c below 7%' });
    expect(within(goalCard).getByText('active')).toBeTruthy();
    expect(within(goalCard).getByText('In progress')).toBeTruthy();
    expect(within(goalCard).getByText('Target: HbA1c < 7%, by Jun 1, 2026')).toBeTruthy();

    const activities = screen.getByRole('region', { name: 'Activities' });
    const rows = within(activities).getAllByRole('listitem');
    expect(rows.map((r) => r.getAttribute('aria-label'))).toEqual(['Order HbA1c', 'Foot exam', 'Diet class']);
    expect(within(rows[2]).getByLabelText('Status cancelled')).toBeTruthy();
    expect(within(activities).getByText('Order set Education: 1 activities (active)')).toBeTruthy();

    const figure = screen.getByRole('figure', { name: 'Activity progress chart' });
    expect(within(figure).getByRole('status').textContent).toBe('1 of 2 activities completed (50%), 1 cancelled');
    expect(within(figure).getByRole('progressbar', { name: 'Plan progress 50%' })).toBeTruthy();
    // Two weeks of due dates, three stacked series.
    expect(figure.querySelectorAll('.recharts-bar')).toHaveLength(3);
    const table = within(figure).getByRole('table', { name: 'Activities by week' });
    expect(
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.textContent),
    ).toEqual(['Week of 2026-03-02110', 'Week of 2026-03-09001']);

    await user.click(screen.getByRole('button', { name: 'Work them in the task list' }));
    expect(onOpenTasks).toHaveBeenCalled();
  });

  it('answers a missing plan with an error', async () => {
    const { client } = mockClient({ 'GET /fhir/R4/CarePlan': () => bundle([]) });
    renderWithHearth(<CarePlanView carePlanId="gone" />, client);
    expect((await screen.findByRole('alert')).textContent).toContain('Not found');
  });
});

describe('planProgress', () => {
  it('counts completed, remaining and cancelled per week of due date, undated last', () => {
    const progress = planProgress([
      t('a', 'completed', '2026-03-04'),
      t('b', 'in-progress', '2026-03-08T23:00:00Z'),
      t('c', 'requested'),
      t('d', 'rejected', '2026-03-16'),
    ]);
    expect(progress.rows).toEqual([
      { week: '2026-03-02', label: 'Week of 2026-03-02', completed: 1, remaining: 1, cancelled: 0 },
      { week: '2026-03-16', label: 'Week of 2026-03-16', completed: 0, remaining: 0, cancelled: 1 },
      { week: '', label: 'No due date', completed: 0, remaining: 1, cancelled: 0 },
    ]);
    expect(progress).toMatchObject({ completed: 1, remaining: 2, cancelled: 1, total: 4, percent: 33 });
    expect(planProgress([]).percent).toBe(0);
  });

  it('says a period in words', () => {
    expect(periodText({ start: '2026-03-02T09:00:00Z' })).toBe('Since Mar 2, 2026');
    expect(periodText({ start: '2026-03-02', end: '2026-06-01' })).toBe('Mar 2, 2026 – Jun 1, 2026');
    expect(periodText({ end: '2026-06-01' })).toBe('Until Jun 1, 2026');
    expect(periodText(undefined)).toBe('');
  });
});
