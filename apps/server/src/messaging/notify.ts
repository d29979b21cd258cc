// Email to the recipients of a new message who are not connected (docs/communications.md): a
// committed create of a sent Communication queues a job; the job emails each recipient who is a
// project member with an email address, is not the sender, has not read it yet and has no live
// subscription websocket (subscriptions/presence.ts). The email says only that there is a message
// and links to the app: no content, no names (it leaves the platform in clear).
import { isUnreadBy, recipientsOf, threadIdOf, type Communication, type ProjectMembership } from '@hearth/core';
import type { JobQueue } from '../jobs/queue.js';
import type { EmailMessage } from '../platform/email.js';
import type { Logger } from '../platform/logger.js';
import type { Repository } from '../storage/repository.js';
import type { WriteEvent } from '../storage/types.js';

export const NOTIFY_QUEUE = 'messaging-notify';

export interface NotifyJob {
  projectId: string;
  id: string;
  versionId: string;
}

export interface NotifyDeps {
  systemRepo: (projectId?: string) => Repository;
  /** Sends through the platform's SMTP relay (platform/email.ts). */
  send: (message: EmailMessage) => Promise<void>;
  /** True when the profile has a live subscription websocket in the project. */
  isConnected: (projectId: string, profile: string) => Promise<boolean>;
  /** The web app's public URL, ending in '/'. */
  appBaseUrl: string;
  logger: Logger;
}

/** The people who can be emailed: profiles that a project membership (and so a user) may have. */
const PERSON = /^(Patient|Practitioner|RelatedPerson)\/[A-Za-z0-9\-.]{1,64}$/;

/** The jobs to queue for a batch of committed writes: one per message sent to someone. */
export function notifyJobsFor(events: WriteEvent[]): NotifyJob[] {
  const jobs: NotifyJob[] = [];
  for (const { interaction, version } of events) {
    const message = version.resource as Communication | undefined;
    if (interaction !== 'create' || version.resourceType !== 'Communication' || !message) {
      continue;
    }
    if (message.status !== 'completed' || !recipientsOf(message).some((r) => PERSON.test(r))) {
      continue;
    }
    jobs.push({ projectId: version.projectId, id: version.id, versionId: String(version.versionId) });
  }
  return jobs;
}

/** A write listener that queues the notification jobs (after the commit). */
export function notifyOnWrite(jobs: JobQueue, logger: Logger): (events: WriteEvent[]) => void {
  return (events) => {
    const items = notifyJobsFor(events).map((data) => ({ data }));
    if (items.length > 0) {
      jobs.sendMany(NOTIFY_QUEUE, items).catch((err: unknown) => {
        logger.warn({ err }, 'message notifications not queued');
      });
    }
  };
}

/** The email addresses of the users whose membership in the project has `profile`. */
async function emailsOf(repo: Repository, projectId: string, profile: string): Promise<string[]> {
  const ids = await repo.findMatches(
    'ProjectMembership',
    `project=Project/${projectId}&profile=${encodeURIComponent(profile)}`,
    10,
  );
  const emails: string[] = [];
  for (const row of await repo.readResources('ProjectMembership', ids)) {
    const membership = row.resource as ProjectMembership;
    if (membership.active === false) {
      continue;
    }
    const userId = /^User\/(.+)$/.exec(membership.user?.reference ?? '')?.[1];
    if (!userId) {
      continue;
    }
    const [user] = await repo.readResources('User', [userId]);
    const email = user?.resource.email;
    if (typeof email === 'string' && email.includes('@')) {
      emails.push(email);
    }
  }
  return emails;
}

/**
 * Emails the offline recipients of one message. Returns who was emailed. A recipient who has read
 * it already (the message's current version) or is connected is skipped.
 */
export async function notifyRecipients(deps: NotifyDeps, job: NotifyJob): Promise<string[]> {
  const repo = deps.systemRepo();
  const [current] = await repo.readResources('Communication', [job.id]);
  if (!current) {
    return [];
  }
  const message = current.resource as Communication;
  const sender = message.sender?.reference;
  const link = `${deps.appBaseUrl}messages/${threadIdOf(message) ?? job.id}`;
  const emailed: string[] = [];
  for (const recipient of new Set(recipientsOf(message))) {
    if (!PERSON.test(recipient) || recipient === sender || !isUnreadBy(message, recipient)) {
      continue;
    }
    if (await deps.isConnected(job.projectId, recipient)) {
      continue;
    }
    for (const to of await emailsOf(repo, job.projectId, recipient)) {
      await deps.send({
        to,
        subject: 'You have a new message',
        text: `You have a new message in Hearth.\n\nSign in to read it: ${link}\n`,
      });
      emailed.push(to);
    }
  }
  if (emailed.length > 0) {
    deps.logger.info({ communication: job.id, count: emailed.length }, 'new message: offline recipients emailed');
  }
  return emailed;
}

/** Defines the notification queue (before the job queue starts). */
export function defineNotifyJobs(jobs: JobQueue, deps: NotifyDeps): void {
  jobs.define<NotifyJob>({
    name: NOTIFY_QUEUE,
    // A failed relay is tried again; an email already sent in a failed attempt may be sent twice.
    retryLimit: 2,
    expireInSeconds: 120,
    handler: async (job) => {
      await notifyRecipients(deps, job);
    },
  });
}
