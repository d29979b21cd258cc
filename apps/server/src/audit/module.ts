// The access audit trail: who read or changed which data, when, from where, with what outcome.
// docs/compliance.md describes it; this file wires its parts together (services.ts builds it).
import { fail, forbiddenWith, type Resource } from '@hearth/core';
import type { Config } from '../config/schema.js';
import type { JobQueue } from '../jobs/queue.js';
import type { FhirContext } from '../operations/context.js';
import { PROJECT_VERIFY_AUDIT } from '../operations/definitions/hearth.js';
import type { OperationRegistry } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import type { SearchIndexer } from '../storage/types.js';
import { AuditCapture, RequestAudit, withAuditOutbox } from './capture.js';
import { verifyChain, type ChainReport } from './chain.js';
import { accessesOf, type FinishedRequest } from './classify.js';
import { patientView } from './patient-view.js';
import { purgeTrail } from './retention.js';
import { MAX_COUNT, searchTrail } from './search.js';
import { PatientHolders, type ProjectLike } from './settings.js';
import { entryOfAccess } from './stored-entry.js';
import type { AuditAgent } from './types.js';
import { AuditWriter } from './writer.js';

/** The caller of a request as the trail needs it (auth provides it: services.ts). */
export interface AuditCaller {
  project: ProjectLike & { id: string };
  /** A project admin (or super admin): sees the project's whole trail. */
  admin: boolean;
  /** "Patient/123" when the caller is a patient: sees the entries about their own record. */
  patient?: string;
  agent: AuditAgent;
}

export type AuditCallerLookup = (context: FhirContext) => AuditCaller | undefined;

export interface AuditModuleOptions {
  config: Config;
  pool: Pool;
  logger: Logger;
}

const RETENTION_QUEUE = 'audit-retention';
const RETENTION_EVERY_MS = 3_600_000;

export class AuditModule {
  readonly capture = new AuditCapture();
  readonly writer: AuditWriter;
  readonly holders: PatientHolders;
  /** Set by services.ts once auth exists. */
  callerOf: AuditCallerLookup = () => undefined;

  constructor(private readonly options: AuditModuleOptions) {
    this.writer = new AuditWriter({
      pool: options.pool,
      logger: options.logger,
      maxBuffered: options.config.auditMaxBuffered,
      batchSize: 1000,
      flushIntervalMs: options.config.auditFlushMs,
    });
    this.holders = new PatientHolders(options.pool, options.config.cacheMaxAgeMs);
  }

  /** Starts the writer; what a crashed process left in the outbox is moved at its first flush. */
  start(): void {
    this.writer.start();
    void this.writer.flush();
  }

  /** The indexer with each write's entry written in the write's own statement or transaction. */
  wrapIndexer(inner: SearchIndexer): SearchIndexer {
    return withAuditOutbox(inner, this.capture, (projectId) => this.holders.patientWritten(projectId));
  }

  /** Once the caller is known: the request is recorded in its project's mode. */
  async begin(audit: RequestAudit, context: FhirContext, address?: string, userAgent?: string): Promise<void> {
    const caller = this.callerOf(context);
    if (!caller) return;
    audit.mode = await this.holders.modeOf(caller.project);
    audit.info = {
      projectId: caller.project.id,
      agent: caller.agent,
      address,
      userAgent,
      requestId: context.requestId,
    };
  }

  /** After the response is sent: the request's entries go to the writer's buffer. */
  finish(audit: RequestAudit, request: FinishedRequest): void {
    audit.open = false;
    if (!audit.info || audit.mode === 'off') return;
    const info = audit.info;
    for (const access of accessesOf(request, audit.mode, audit.durableWrites)) {
      this.writer.record(entryOfAccess(info, access));
    }
  }

  /**
   * AuditEvent search from the trail, for those it serves: project admins (their project's
   * trail) and patients (entries about their own record, other patients left out). Undefined:
   * the caller searches the stored AuditEvent resources as before.
   */
  async search(context: FhirContext, params: URLSearchParams): Promise<string | undefined> {
    const caller = this.callerOf(context);
    if (!caller || (!caller.admin && !caller.patient)) return undefined;
    // What this process still holds in memory is searchable at once.
    await this.writer.flush();
    const projectId = caller.project.id;
    if (caller.admin) {
      return searchTrail(this.options.pool, { projectId, params, fhirBase: context.fhirBase });
    }
    const own = new URLSearchParams(params);
    // ANDed with any patient asked for: another patient's id finds nothing.
    own.append('patient', caller.patient as string);
    const text = await searchTrail(this.options.pool, { projectId, params: own, fhirBase: context.fhirBase });
    return patientView(text, caller.patient as string);
  }

  /** One trail entry by id, as the caller may see it (AuditEvent/{id}); undefined: not one of theirs. */
  async read(context: FhirContext, id: string): Promise<string | undefined> {
    const text = await this.search(context, new URLSearchParams({ _id: id }));
    const found = text ? (JSON.parse(text) as { entry?: { resource: unknown }[] }).entry?.[0] : undefined;
    return found ? JSON.stringify(found.resource) : undefined;
  }

  /** A project's entries for $export, oldest first, a page at a time. */
  async *entries(projectId: string, since: string | undefined, fhirBase: string): AsyncGenerator<Resource> {
    await this.writer.flush();
    let cursor: string | undefined;
    for (;;) {
      const params = new URLSearchParams({ _sort: 'date', _count: String(MAX_COUNT) });
      if (since) params.set('date', `gt${since}`);
      if (cursor) params.set('_cursor', cursor);
      const page = JSON.parse(await searchTrail(this.options.pool, { projectId, params, fhirBase })) as {
        entry?: { resource: Resource }[];
        link: { relation: string; url: string }[];
      };
      for (const entry of page.entry ?? []) yield entry.resource;
      const next = page.link.find((l) => l.relation === 'next');
      cursor = next ? (new URL(next.url).searchParams.get('_cursor') ?? undefined) : undefined;
      if (!cursor) return;
    }
  }

  async verify(projectId: string): Promise<ChainReport> {
    await this.writer.flush();
    return verifyChain(this.options.pool, projectId);
  }

  registerOperations(registry: OperationRegistry): void {
    registry.register({
      definition: PROJECT_VERIFY_AUDIT,
      handler: async (input) => {
        const caller = this.callerOf(input.context);
        const projectId = input.target.id as string;
        if (!caller?.admin || caller.project.id !== projectId) {
          fail(forbiddenWith(`Only admins of Project/${projectId} may verify its audit trail`));
        }
        const report = await this.verify(projectId);
        const value = (name: string, v: unknown, type: string) => (v === undefined ? [] : [{ name, [type]: v }]);
        return jsonResult({
          resourceType: 'Parameters',
          parameter: [
            ...value('intact', !report.broken, 'valueBoolean'),
            ...value('checked', report.checked, 'valueInteger'),
            ...value('first', report.first, 'valueInteger'),
            ...value('head', report.head, 'valueInteger'),
            ...value('brokenAt', report.broken?.seq, 'valueInteger'),
            ...value('brokenEntry', report.broken?.id, 'valueString'),
            ...value('reason', report.broken?.reason, 'valueString'),
          ],
        });
      },
    });
  }

  /** The hourly retention job (call before the queue starts). */
  defineJobs(jobs: JobQueue): void {
    jobs.define<Record<string, never>>({
      name: RETENTION_QUEUE,
      retryLimit: 2,
      handler: async () => {
        try {
          await purgeTrail({
            pool: this.options.pool,
            logger: this.options.logger,
            serverDays: this.options.config.auditRetentionDays,
          });
        } finally {
          await this.scheduleRetention(jobs);
        }
      },
    });
  }

  /** Queues the next retention run (one queued at a time, whichever process queues it). */
  async scheduleRetention(jobs: JobQueue): Promise<void> {
    await jobs.send(
      RETENTION_QUEUE,
      {},
      { singletonKey: RETENTION_QUEUE, startAfter: new Date(Date.now() + RETENTION_EVERY_MS) },
    );
  }

  /** Writes what is buffered (shutdown). */
  async stop(): Promise<void> {
    await this.writer.stop();
  }
}

export { RequestAudit };
export type { FinishedRequest };
