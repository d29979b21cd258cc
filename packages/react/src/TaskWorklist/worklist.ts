/**
 * A clinician's task work list on plain R4 Tasks (hl7.org/fhir/R4/task.html): what is owned by the
 * practitioner, what is owned by a team they belong to (a CareTeam, an Organization or one of
 * their PractitionerRoles) or by nobody yet, the due date (Task.restriction.period.end), and the
 * state changes claim / start / complete / cancel, each a version-conditional update (If-Match) so
 * that of two people acting on one task at once, one wins and the other is told what happened.
 */
import {
  formatCodeableConcept,
  getDisplayString,
  OperationOutcomeError,
  type CareTeam,
  type HearthClient,
  type Patient,
  type PractitionerRole,
  type Reference,
  type Resource,
  type Task,
} from '@hearth/core';

export type WorklistScope = 'mine' | 'team';
export type DueFilter = 'any' | 'overdue' | 'today' | 'week' | 'none';

/** The statuses of work still to do (R4 task-status: not yet completed, cancelled, failed or rejected). */
export const OPEN_TASK_STATUSES = ['draft', 'requested', 'received', 'accepted', 'ready', 'in-progress', 'on-hold'];
/** Every R4 task status, in workflow order (the status filter's choices). */
export const TASK_STATUSES = [
  ...OPEN_TASK_STATUSES,
  'completed',
  'cancelled',
  'failed',
  'rejected',
  'entered-in-error',
];
/** Statuses from which a task can be started. */
const STARTABLE = ['draft', 'requested', 'received', 'accepted', 'ready', 'on-hold'];

export interface WorklistItem {
  task: Task;
  patient?: Patient;
}

/** When the task is due: the end of its restriction period (R4 Task.restriction.period). */
export function taskDue(task: Task): string | undefined {
  return task.restriction?.period?.end;
}

function dayStart(d: Date): number {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
}

/** Which due-date bucket a task falls in, relative to `now` (local calendar days). */
export function dueBucket(task: Task, now = new Date()): Exclude<DueFilter, 'any'> | 'later' {
  const due = taskDue(task);
  if (!due) return 'none';
  const at = new Date(due.length === 10 ? `${due}T23:59:59` : due).getTime();
  if (Number.isNaN(at)) return 'none';
  if (at < now.getTime()) return 'overdue';
  const today = dayStart(now);
  if (at < today + 86_400_000) return 'today';
  if (at < today + 7 * 86_400_000) return 'week';
  return 'later';
}

/** Whether a task passes the due filter: 'today' includes overdue, 'week' includes today. */
export function matchesDue(task: Task, filter: DueFilter, now = new Date()): boolean {
  if (filter === 'any') return true;
  const bucket = dueBucket(task, now);
  if (filter === 'none') return bucket === 'none';
  if (filter === 'overdue') return bucket === 'overdue';
  if (filter === 'today') return bucket === 'overdue' || bucket === 'today';
  return bucket === 'overdue' || bucket === 'today' || bucket === 'week';
}

/** Earliest due first; tasks without a due date after them, oldest authored first. */
export function compareByDue(a: Task, b: Task): number {
  const da = taskDue(a);
  const db = taskDue(b);
  if (da && db && da !== db) return new Date(da).getTime() - new Date(db).getTime();
  if (da && !db) return -1;
  if (!da && db) return 1;
  return (a.authoredOn ?? '').localeCompare(b.authoredOn ?? '');
}

/**
 * The teams a practitioner belongs to: their PractitionerRoles, those roles' Organizations, and the
 * CareTeams naming the practitioner or one of the roles as a participant.
 */
export async function loadTeams(client: HearthClient, practitioner: Reference): Promise<Reference[]> {
  const me = practitioner.reference ?? '';
  const roles = (await client.searchResources(
    'PractitionerRole',
    { practitioner: me, _count: '100' },
    { cache: 'no-cache' },
  )) as PractitionerRole[];
  const members = [me, ...roles.map((r) => `PractitionerRole/${r.id}`)];
  const careTeams = (await client.searchResources(
    'CareTeam',
    { participant: members.join(','), _count: '100' },
    { cache: 'no-cache' },
  )) as CareTeam[];
  const out = new Map<string, Reference>();
  for (const role of roles) {
    const roleName = formatCodeableConcept(role.code?.[0]) || 'My role';
    const at = role.organization?.display ? ` at ${role.organization.display}` : '';
    out.set(`PractitionerRole/${role.id}`, { reference: `PractitionerRole/${role.id}`, display: `${roleName}${at}` });
    const org = role.organization?.reference;
    if (org) out.set(org, { reference: org, display: role.organization?.display });
  }
  for (const team of careTeams) {
    if (team.status && team.status !== 'active' && team.status !== 'proposed') continue;
    out.set(`CareTeam/${team.id}`, { reference: `CareTeam/${team.id}`, display: team.name ?? getDisplayString(team) });
  }
  return [...out.values()];
}

/** Pages of a work-list search followed at most (of 200 tasks each). */
const MAX_PAGES = 5;

/** A work list, and whether more tasks matched than were read (MAX_PAGES pages). */
export type Worklist = WorklistItem[] & { truncated?: boolean };

async function searchTasks(client: HearthClient, query: Record<string, string>): Promise<Worklist> {
  const out: Worklist = [];
  let pages = 0;
  for await (const page of client.searchResourcePages(
    'Task',
    { ...query, _count: '200', _include: 'Task:patient' },
    { cache: 'no-cache' },
  )) {
    if (pages === MAX_PAGES) {
      out.truncated = true;
      break;
    }
    pages++;
    const entries = (page.bundle.entry ?? []) as { resource?: Task | Patient; search?: { mode?: string } }[];
    const patients = new Map(
      entries
        .map((e) => e.resource)
        .filter((r): r is Patient => r?.resourceType === 'Patient')
        .map((p) => [`Patient/${p.id}`, p]),
    );
    for (const e of entries) {
      if (e.search?.mode === 'include' || e.resource?.resourceType !== 'Task') continue;
      const task = e.resource;
      out.push({ task, patient: patients.get(task.for?.reference ?? '') });
    }
  }
  return out;
}

/**
 * The work list: the practitioner's own tasks ('mine'), or the tasks of their teams with the
 * unassigned ones ('team'), in the given statuses, by due date. Due filtering and sorting happen
 * here: R4 defines no search parameter on Task.restriction.
 */
export async function loadWorklist(
  client: HearthClient,
  options: {
    scope: WorklistScope;
    practitioner: Reference;
    teams: Reference[];
    statuses: string[];
    due?: DueFilter;
    now?: Date;
  },
): Promise<Worklist> {
  const status = (options.statuses.length ? options.statuses : OPEN_TASK_STATUSES).join(',');
  const searches: Promise<Worklist>[] = [];
  if (options.scope === 'mine') {
    searches.push(searchTasks(client, { owner: options.practitioner.reference ?? '', status }));
  } else {
    if (options.teams.length) {
      searches.push(searchTasks(client, { owner: options.teams.map((t) => t.reference).join(','), status }));
    }
    searches.push(searchTasks(client, { 'owner:missing': 'true', status }));
  }
  const lists = await Promise.all(searches);
  const seen = new Set<string>();
  const out: Worklist = lists
    .flat()
    .filter((item) => {
      if (seen.has(item.task.id ?? '')) return false;
      seen.add(item.task.id ?? '');
      return matchesDue(item.task, options.due ?? 'any', options.now);
    })
    .sort((a, b) => compareByDue(a.task, b.task));
  out.truncated = lists.some((l) => l.truncated);
  return out;
}

/** Whether the practitioner owns the task. */
export function ownedBy(task: Task, practitioner: Reference): boolean {
  return !!task.owner?.reference && task.owner.reference === practitioner.reference;
}

/** Which actions a task offers the practitioner now. */
export function taskActions(
  task: Task,
  practitioner: Reference,
): { claim: boolean; start: boolean; complete: boolean; cancel: boolean } {
  const open = OPEN_TASK_STATUSES.includes(task.status);
  const mine = ownedBy(task, practitioner);
  return {
    claim: open && !mine,
    start: mine && STARTABLE.includes(task.status),
    complete: mine && open,
    cancel: open,
  };
}

function touched(task: Task, now: Date): Task {
  const { meta: _meta, ...rest } = task;
  return { ...rest, lastModified: now.toISOString() } as Task;
}

/** Claimed: owned by the practitioner; a task nobody had accepted yet becomes accepted (R4: "a potential performer has claimed ownership"). */
export function claimedTask(task: Task, practitioner: Reference, now = new Date()): Task {
  return {
    ...touched(task, now),
    owner: practitioner,
    status: ['draft', 'requested', 'received', 'ready'].includes(task.status) ? 'accepted' : task.status,
  };
}

/** Started: in progress, with the start of its execution period. */
export function startedTask(task: Task, now = new Date()): Task {
  return {
    ...touched(task, now),
    status: 'in-progress',
    executionPeriod: { ...task.executionPeriod, start: task.executionPeriod?.start ?? now.toISOString() },
  };
}

/** Completed: with the end of its execution period (and its start, if it was never started). */
export function completedTask(task: Task, now = new Date()): Task {
  return {
    ...touched(task, now),
    status: 'completed',
    executionPeriod: {
      ...task.executionPeriod,
      start: task.executionPeriod?.start ?? now.toISOString(),
      end: now.toISOString(),
    },
  };
}

/** Cancelled, with the reason as statusReason. */
export function cancelledTask(task: Task, reason: string, now = new Date()): Task {
  const text = reason.trim();
  if (!text) throw new Error('Give a reason for cancelling the task');
  return { ...touched(task, now), status: 'cancelled', statusReason: { text } };
}

/** Another user's change got in first: what the task is now, in words, and the task as it is. */
export class TaskConflictError extends Error {
  constructor(
    message: string,
    readonly current: Task | undefined,
  ) {
    super(message);
    this.name = 'TaskConflictError';
  }
}

/**
 * Writes `next` only if the task is still at the version `before` was read at (If-Match). When
 * someone else changed it meanwhile (412), reads it again and throws a TaskConflictError saying
 * who owns it now and in which status.
 */
export async function updateTask(client: HearthClient, before: Task, next: Task): Promise<Task> {
  try {
    const saved = await client.updateResource(next, { ifMatch: before.meta?.versionId });
    client.invalidateSearches('Task');
    return saved as Task;
  } catch (err) {
    if (!(err instanceof OperationOutcomeError) || err.status !== 412) throw err;
    client.invalidateSearches('Task');
    const current = (await client
      .readResource('Task', before.id as string, { cache: 'no-cache' })
      .catch(() => undefined)) as Task | undefined;
    throw new TaskConflictError(conflictMessage(current, await ownerName(client, current)), current);
  }
}

/** The name of the task's owner: its display, else the owner resource's name, else its reference. */
async function ownerName(client: HearthClient, task: Task | undefined): Promise<string> {
  const owner = task?.owner;
  if (!owner) return 'nobody';
  if (owner.display) return owner.display;
  if (!owner.reference) return 'someone else';
  const resource = await client.readReference(owner).catch(() => undefined);
  return resource ? getDisplayString(resource as Resource) : owner.reference;
}

function conflictMessage(current: Task | undefined, owner: string): string {
  if (!current) return 'Someone else changed this task first, and it can no longer be read.';
  return `Someone else changed this task first: it is now ${current.status}, owned by ${owner}. The list shows it as it is now.`;
}
