import { createHmac } from 'node:crypto';
import type { Bot, Resource } from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import { outboundRequest, type OutboundPolicy } from '../platform/outbound-http.js';
import type { Repository } from '../storage/repository.js';
import type { JobAttempt } from '../jobs/queue.js';
import type { MemberRepositories } from '../jobs/actor.js';
import type { AuditWriter } from '../bots/audit.js';
import type { BotRunner } from '../bots/runner.js';
import type { DeliveryJob } from './evaluate.js';
import type { ActiveSubscription } from './model.js';
import type { ActiveSubscriptions } from './active.js';
import { notificationId } from './notification-id.js';
import { ATTR, inSpan, type Telemetry } from '../observability/telemetry.js';

/** Sends email (the auth module's SMTP mailer). */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

export interface DeliveryDeps {
  active: ActiveSubscriptions;
  systemRepo: (projectId?: string) => Repository;
  members: MemberRepositories;
  outbound: OutboundPolicy;
  outboundTimeoutMs: number;
  bots: BotRunner;
  mailer?: Mailer;
  fhirBase: string;
  logger: Logger;
  audits: AuditWriter;
  /** A span per attempt; attempts counted by channel and outcome. */
  telemetry?: Telemetry;
}

/** Header naming the deleted resource on a rest-hook for a delete (as the spec's platform sends it). */
export const DELETED_HEADER = 'X-Medplum-Deleted-Resource';

/**
 * Header carrying the notification's id: the same on every attempt of one notification, including
 * one sent again after a crash (delivery is at least once), so a receiver can drop duplicates; a
 * `$resend` is a new notification with an id of its own.
 */
export const DELIVERY_ID_HEADER = 'X-Hearth-Delivery-Id';

/** The notification id of a delivery job. */
export function deliveryId(job: DeliveryJob): string {
  return notificationId({ ...job, versionId: job.interaction === 'delete' ? job.previousVersionId : job.versionId });
}

/** The rest-hook signature: HMAC-SHA256 of the exact body bytes, hex, keyed with the subscription secret. */
export function signBody(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** channel.header entries are "Name: value" (hl7.org/fhir/R4/subscription-definitions.html#Subscription.channel.header). */
function parseHeaders(lines: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines ?? []) {
    const i = line.indexOf(':');
    if (i > 0) {
      const name = line.slice(0, i).trim();
      if (/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
        out[name] = line.slice(i + 1).trim();
      }
    }
  }
  return out;
}

class DeliveryFailed extends Error {}

/**
 * Delivers one change to one subscription (a job; a throw schedules a retry with backoff until the
 * subscription's attempts are used up). Every attempt is recorded as an AuditEvent. The resource is
 * read again as the subscription's author, so a delivery never carries what its author cannot read.
 */
export async function deliver(deps: DeliveryDeps, job: DeliveryJob, attempt: JobAttempt): Promise<unknown> {
  const { tracer, metrics } = deps.telemetry ?? {};
  const seen: { channel?: string } = {};
  const attributes = {
    [ATTR.subscription]: `Subscription/${job.subscriptionId}`,
    [ATTR.project]: job.projectId,
    [ATTR.resourceType]: job.resourceType,
  };
  try {
    const result = await inSpan(tracer, 'subscription delivery', attributes, (span) =>
      attemptDelivery(deps, job, attempt, (channel) => {
        seen.channel = channel;
        span?.setAttribute(ATTR.channel, channel);
      }),
    );
    metrics?.subscriptionDeliveries.inc({
      channel: seen.channel ?? 'none',
      outcome: result === undefined ? 'delivered' : 'skipped',
    });
    return result;
  } catch (err) {
    metrics?.subscriptionDeliveries.inc({ channel: seen.channel ?? 'none', outcome: 'failed' });
    throw err;
  }
}

async function attemptDelivery(
  deps: DeliveryDeps,
  job: DeliveryJob,
  attempt: JobAttempt,
  onChannel: (channel: string) => void,
): Promise<unknown> {
  const system = deps.systemRepo(job.projectId);
  // The active subscriptions of the project, as this process knows them (changes reach it at once).
  const sub = (await deps.active.forType(job.projectId, job.resourceType)).find((s) => s.id === job.subscriptionId);
  if (!sub) {
    return { skipped: 'subscription no longer active' };
  }
  onChannel(sub.channel);
  const versionId = job.interaction === 'delete' ? job.previousVersionId : job.versionId;
  const target = `${job.resourceType}/${job.id}`;
  const start = new Date();
  // A job of retries after a first attempt made in the evaluation job counts its attempts from 2.
  const first = job.firstAttempt ?? 1;
  const number = first + attempt.retryCount;
  const audit = (success: boolean, description: string): string =>
    deps.audits.record(job.projectId, {
      kind: 'subscription-delivery',
      agent: `Subscription/${sub.id}`,
      onBehalfOf: sub.author,
      entities: [`Subscription/${sub.id}`, target],
      success,
      description: `${description} (attempt ${number} of ${first + attempt.retryLimit})`,
      start,
      end: new Date(),
    });

  let resource: Resource;
  try {
    if (job.content && number === 1) {
      resource = JSON.parse(job.content) as Resource;
    } else {
      const repo = sub.author ? await deps.members.forProfile(job.projectId, sub.author) : system;
      resource = (await repo.readVersion(job.resourceType, job.id, String(versionId))).resource;
    }
  } catch (err) {
    audit(false, `Not delivered: the subscription's author cannot read ${target} (${(err as Error).message})`);
    return { skipped: 'author cannot read the resource' };
  }

  try {
    switch (sub.channel) {
      case 'rest-hook':
        audit(true, await restHook(deps, sub, job, resource));
        break;
      case 'email':
        audit(true, await email(deps, sub, job, resource));
        break;
      case 'bot':
        await runBot(deps, sub, job, resource);
        break;
      default:
        return { skipped: `channel ${sub.channel} is not delivered by jobs` };
    }
  } catch (err) {
    if (sub.channel !== 'bot') {
      audit(false, (err as Error).message);
    }
    throw err;
  }
  // Delivered: no output, so the job is completed with others in one statement.
  return undefined;
}

async function restHook(
  deps: DeliveryDeps,
  sub: ActiveSubscription,
  job: DeliveryJob,
  resource: Resource,
): Promise<string> {
  const url = sub.endpoint;
  if (!url) {
    throw new DeliveryFailed('The subscription has no channel.endpoint');
  }
  const headers = parseHeaders(sub.resource.channel?.header);
  headers[DELIVERY_ID_HEADER] = deliveryId(job);
  // full-resource: the resource is the body; empty and id-only: no body (id-only names the version).
  const body = sub.payload === 'full-resource' ? JSON.stringify(resource) : '';
  if (body) {
    headers['Content-Type'] = 'application/fhir+json';
  }
  if (sub.payload === 'id-only') {
    const versionId = job.interaction === 'delete' ? job.previousVersionId : job.versionId;
    headers['Content-Location'] = `${deps.fhirBase}${job.resourceType}/${job.id}/_history/${versionId}`;
  }
  if (job.interaction === 'delete') {
    headers[DELETED_HEADER] = `${job.resourceType}/${job.id}`;
  }
  if (sub.secret) {
    headers['X-Signature'] = signBody(sub.secret, body);
  }
  let response;
  try {
    response = await outboundRequest(deps.outbound, {
      url,
      method: 'POST',
      headers,
      body: body || undefined,
      timeoutMs: deps.outboundTimeoutMs,
      maxResponseBytes: 1 << 20,
    });
  } catch (err) {
    throw new DeliveryFailed(`POST ${url} failed: ${(err as Error).message}`);
  }
  if (response.status < 200 || response.status >= 300) {
    throw new DeliveryFailed(`POST ${url} answered ${response.status} ${response.statusText}`.trim());
  }
  return `POST ${url} answered ${response.status}`;
}

async function email(
  deps: DeliveryDeps,
  sub: ActiveSubscription,
  job: DeliveryJob,
  resource: Resource,
): Promise<string> {
  const to = (sub.endpoint ?? '').replace(/^mailto:/i, '').trim();
  if (!/^[^\s@]+@[^\s@]+$/.test(to)) {
    throw new DeliveryFailed(
      `channel.endpoint "${sub.endpoint ?? ''}" is not an email address (mailto:name@example.org)`,
    );
  }
  if (!deps.mailer) {
    throw new DeliveryFailed('Email is not configured on this server (SMTP relay)');
  }
  const what = `${job.resourceType}/${job.id}`;
  const lines = [
    `${what} was ${job.interaction}d.`,
    `${deps.fhirBase}${what}`,
    ...(sub.payload === 'full-resource' ? ['', JSON.stringify(resource, null, 2)] : []),
  ];
  await deps.mailer.send({
    to,
    subject: sub.resource.reason || `Subscription ${sub.id}: ${what}`,
    text: lines.join('\n'),
  });
  return `Email sent to ${to}`;
}

async function runBot(
  deps: DeliveryDeps,
  sub: ActiveSubscription,
  job: DeliveryJob,
  resource: Resource,
): Promise<void> {
  const botId = (sub.endpoint ?? '').replace(/^Bot\//, '');
  const system = deps.systemRepo(job.projectId);
  const bot = (await system.readResource('Bot', botId)).resource as unknown as Bot;
  if (bot.meta?.project !== job.projectId) {
    throw new DeliveryFailed(`Bot/${botId} is not in the subscription's project`);
  }
  const result = await deps.bots.run({
    bot,
    input: resource,
    contentType: 'application/fhir+json',
    requester: { reference: `Subscription/${sub.id}` },
    entities: [`Subscription/${sub.id}`, `${job.resourceType}/${job.id}`],
  });
  if (!result.ok) {
    throw new DeliveryFailed(`Bot/${botId} failed: ${result.message}`);
  }
}
