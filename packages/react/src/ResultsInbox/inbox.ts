import {
  REVIEW_RESULT,
  type DiagnosticReport,
  type HearthClient,
  type Observation,
  type Patient,
  type Reference,
  type Task,
} from '@hearth/core';

/** One unreviewed report: its review Task, the report, its patient and results. */
export interface InboxItem {
  task: Task;
  report?: DiagnosticReport;
  patient?: Patient;
  observations: Observation[];
}

/** The search of a practitioner's open review tasks (the inbox and its count share it). */
export function inboxQuery(owner: Reference): Record<string, string> {
  return {
    owner: owner.reference ?? '',
    code: `${REVIEW_RESULT.system}|${REVIEW_RESULT.code}`,
    status: 'requested,received,accepted,in-progress',
  };
}

/** How many reports await the practitioner's review. */
export async function countUnreviewed(client: HearthClient, owner: Reference): Promise<number> {
  const found = await client.search('Task', { ...inboxQuery(owner), _summary: 'count' }, { cache: 'no-cache' });
  return found.total ?? 0;
}

/**
 * The practitioner's unreviewed reports, oldest first: their open review Tasks with the focused
 * DiagnosticReports, the reports' Observations and the patients, in one search
 * (`_include=Task:focus`, `_include=Task:patient`, `_include:iterate=DiagnosticReport:result`).
 */
export async function loadInbox(client: HearthClient, owner: Reference): Promise<InboxItem[]> {
  const found = await client.search(
    'Task',
    {
      ...inboxQuery(owner),
      _sort: 'authored-on',
      _count: '100',
      _include: ['Task:focus', 'Task:patient'],
      '_include:iterate': 'DiagnosticReport:result',
    },
    { cache: 'no-cache' },
  );
  const resources = (found.entry ?? []).map((e) => e.resource).filter((r) => r !== undefined);
  const byRef = new Map(resources.map((r) => [`${r.resourceType}/${r.id}`, r]));
  return (found.entry ?? [])
    .filter((e) => e.search?.mode !== 'include' && e.resource?.resourceType === 'Task')
    .map((e) => {
      const task = e.resource as Task;
      const report = byRef.get(task.focus?.reference ?? '') as DiagnosticReport | undefined;
      return {
        task,
        report,
        patient: byRef.get(task.for?.reference ?? '') as Patient | undefined,
        observations: (report?.result ?? [])
          .map((r) => byRef.get(r.reference ?? '') as Observation | undefined)
          .filter((o): o is Observation => !!o),
      };
    });
}

/** Acknowledges a report: its review Task completed now (conditional on the version read). */
export async function acknowledge(client: HearthClient, task: Task, now = new Date()): Promise<Task> {
  const done: Task = {
    ...task,
    status: 'completed',
    lastModified: now.toISOString(),
    executionPeriod: {
      ...task.executionPeriod,
      start: task.executionPeriod?.start ?? now.toISOString(),
      end: now.toISOString(),
    },
  };
  const updated = await client.updateResource(done, { ifMatch: task.meta?.versionId });
  client.invalidateSearches('Task');
  return updated as Task;
}
