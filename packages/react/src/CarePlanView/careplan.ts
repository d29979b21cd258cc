/**
 * A CarePlan with what it is made of (hl7.org/fhir/R4/careplan.html): its Goals (CarePlan.goal),
 * its activities as Tasks (Task.basedOn the plan, or CarePlan.activity.reference, directly or
 * through a RequestGroup's actions), and the progress of those activities.
 */
import {
  badRequest,
  formatDate,
  type Period,
  notFound,
  OperationOutcomeError,
  type CarePlan,
  type Goal,
  type HearthClient,
  type RequestGroup,
  type Resource,
  type Task,
} from '@hearth/core';
import { compareByDue, taskDue } from '../TaskWorklist/worklist.js';

export interface LoadedCarePlan {
  plan: CarePlan;
  goals: Goal[];
  /** The plan's activities that are Tasks, earliest due first. */
  tasks: Task[];
  /** RequestGroups among the plan's activities (grouped actions of the definition). */
  requestGroups: RequestGroup[];
}

const ID = /^[A-Za-z0-9\-.]{1,64}$/;

function idsOf(references: (string | undefined)[], type: string): string[] {
  return [
    ...new Set(references.filter((r): r is string => !!r?.startsWith(`${type}/`)).map((r) => r.slice(type.length + 1))),
  ];
}

/**
 * Loads a plan in one search (`_include=CarePlan:goal`, `_revinclude=Task:based-on`), then any
 * activity the plan references that is not based on it (Tasks, RequestGroups and the Tasks their
 * actions name), by id.
 */
export async function loadCarePlan(client: HearthClient, id: string): Promise<LoadedCarePlan> {
  if (!ID.test(id)) throw new OperationOutcomeError(badRequest(`Invalid CarePlan id: ${id}`, 'id'));
  const found = await client.search(
    'CarePlan',
    { _id: id, _include: 'CarePlan:goal', _revinclude: 'Task:based-on' },
    { cache: 'no-cache' },
  );
  const resources = (found.entry ?? []).map((e) => e.resource as Resource | undefined).filter((r) => !!r);
  const plan = resources.find((r) => r.resourceType === 'CarePlan' && r.id === id) as CarePlan | undefined;
  if (!plan) throw new OperationOutcomeError(notFound);
  const goals = resources.filter((r): r is Goal => r.resourceType === 'Goal');
  const tasks = new Map(
    resources.filter((r): r is Task => r.resourceType === 'Task').map((t) => [t.id as string, t] as const),
  );
  const activityRefs = (plan.activity ?? []).map((a) => a.reference?.reference);
  const groupIds = idsOf(activityRefs, 'RequestGroup');
  const requestGroups = groupIds.length
    ? ((await client.searchResources(
        'RequestGroup',
        { _id: groupIds.join(','), _count: String(groupIds.length) },
        { cache: 'no-cache' },
      )) as RequestGroup[])
    : [];
  const actionRefs = requestGroups.flatMap((g) => flattenActions(g.action ?? []).map((a) => a.resource?.reference));
  const missing = idsOf([...activityRefs, ...actionRefs], 'Task').filter((t) => !tasks.has(t));
  if (missing.length) {
    const more = (await client.searchResources(
      'Task',
      { _id: missing.join(','), _count: String(missing.length) },
      { cache: 'no-cache' },
    )) as Task[];
    for (const t of more) tasks.set(t.id as string, t);
  }
  return { plan, goals, tasks: [...tasks.values()].sort(compareByDue), requestGroups };
}

type Action = NonNullable<RequestGroup['action']>[number];

/** A RequestGroup's actions, nested ones included, depth first. */
export function flattenActions(actions: Action[]): Action[] {
  return actions.flatMap((a) => [a, ...flattenActions(a.action ?? [])]);
}

export interface ProgressRow {
  /** Monday of the week the activities are due (YYYY-MM-DD), or '' for no due date. */
  week: string;
  label: string;
  completed: number;
  remaining: number;
  cancelled: number;
}

export interface PlanProgress {
  rows: ProgressRow[];
  completed: number;
  remaining: number;
  cancelled: number;
  total: number;
  /** Completed out of those not cancelled, as a whole percentage (0 when nothing is left to do). */
  percent: number;
}

const DONE = new Set(['completed']);
const DROPPED = new Set(['cancelled', 'rejected', 'failed', 'entered-in-error']);

function mondayOf(date: string): string {
  const d = new Date(date.length === 10 ? `${date}T12:00:00Z` : date);
  const day = (d.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day)).toISOString().slice(0, 10);
}

/** The plan's progress: per week of due date, how many activities are completed, remaining, cancelled. */
export function planProgress(tasks: Task[]): PlanProgress {
  const byWeek = new Map<string, ProgressRow>();
  let completed = 0;
  let remaining = 0;
  let cancelled = 0;
  for (const task of tasks) {
    const due = taskDue(task);
    const week = due && !Number.isNaN(new Date(due).getTime()) ? mondayOf(due) : '';
    let row = byWeek.get(week);
    if (!row) {
      row = { week, label: week ? `Week of ${week}` : 'No due date', completed: 0, remaining: 0, cancelled: 0 };
      byWeek.set(week, row);
    }
    if (DONE.has(task.status)) {
      row.completed++;
      completed++;
    } else if (DROPPED.has(task.status)) {
      row.cancelled++;
      cancelled++;
    } else {
      row.remaining++;
      remaining++;
    }
  }
  const rows = [...byWeek.values()].sort((a, b) =>
    a.week === b.week ? 0 : !a.week ? 1 : !b.week ? -1 : a.week.localeCompare(b.week),
  );
  const counted = completed + remaining;
  return {
    rows,
    completed,
    remaining,
    cancelled,
    total: tasks.length,
    percent: counted ? Math.round((completed / counted) * 100) : 0,
  };
}

/** A plan's period in words: "Since Mar 2, 2026", "Until …", or "Mar 2, 2026 – Jun 1, 2026"; '' when absent. */
export function periodText(period: Period | undefined): string {
  const style = { dateStyle: 'medium' } as const;
  const start = formatDate(period?.start, undefined, style);
  const end = formatDate(period?.end, undefined, style);
  if (start && end) return `${start} – ${end}`;
  if (start) return `Since ${start}`;
  return end ? `Until ${end}` : '';
}
