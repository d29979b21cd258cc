// Asynchronous requests (hl7.org/fhir/R4/async.html; FHIR Bulk Data "kick-off" and status pattern):
// `Prefer: respond-async` → 202 Accepted with Content-Location; the client polls that URL.
import {
  ASYNC_JOB_PROGRESS_EXTENSION,
  badRequest,
  fail,
  getStatus,
  notFoundWith,
  serverError,
  type OperationOutcome,
  type Resource,
} from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import type { Repository } from '../storage/repository.js';
import { jsonResult } from '../operations/result.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import type { MemberRepositories } from './actor.js';
import type { JobAttempt, JobQueue } from './queue.js';

export const ASYNC_QUEUE = 'async-job';

/** AsyncJob.type codes (https://hearth.dev/fhir/ValueSet/async-job-type). */
export type AsyncJobType = 'data-migration' | 'export' | 'import' | 'batch' | 'reindex';

/** Progress of a running job, kept on the AsyncJob as an extension (and sent as X-Progress). */
export const PROGRESS_EXTENSION = ASYNC_JOB_PROGRESS_EXTENSION;

export interface AsyncJobContext {
  asyncJobId: string;
  projectId: string;
  /** Acting as whoever asked for the job (their access applies). */
  repo: Repository;
  /**
   * Records progress: a fraction from 0 to 1, a short message, and for work that counts items
   * (a reindex), how many are done of how many (kept as `done` and `total` beside `fraction`).
   */
  progress(fraction: number, message?: string, counts?: ProgressCounts): Promise<void>;
  /** True once the client cancelled the job (DELETE on its status URL). */
  cancelled(): Promise<boolean>;
}

/** Runs the work of one kind of job; returns the output (a Parameters resource) or nothing. */
export type AsyncJobHandler<P> = (params: P, job: AsyncJobContext) => Promise<Resource | undefined>;

interface QueuedAsyncJob {
  asyncJobId: string;
  projectId: string;
  kind: string;
  params: unknown;
  requester?: string;
}

/** Items done of items to do, for a job that counts them. */
export interface ProgressCounts {
  done: number;
  total: number;
}

/** A complex extension: `fraction` (0..1), an optional `message`, and optional `done` and `total` counts. */
interface ProgressExtension {
  url: string;
  extension?: { url: string; valueDecimal?: number; valueString?: string; valueInteger?: number }[];
}

export interface AsyncJobResource extends Resource {
  status: 'accepted' | 'active' | 'completed' | 'error' | 'cancelled';
  requestTime: string;
  transactionTime?: string;
  request: string;
  type?: AsyncJobType;
  output?: Resource;
  extension?: ProgressExtension[];
}

export interface AsyncJobsDeps {
  jobs: JobQueue;
  systemRepo: (projectId?: string) => Repository;
  members: MemberRepositories;
  logger: Logger;
}

/** The job without its progress extension (and without an empty extension list). */
function withoutProgress(job: AsyncJobResource): AsyncJobResource {
  const { extension, ...rest } = job;
  const kept = (extension ?? []).filter((e) => e.url !== PROGRESS_EXTENSION);
  return kept.length > 0 ? { ...rest, extension: kept } : rest;
}

/**
 * The generic helper for long operations: `start()` records an AsyncJob (status accepted), queues
 * the work as a durable job, and answers 202 with Content-Location `[base]/job/{id}/status`;
 * the job moves the AsyncJob through active to completed (with its output) or error, and records
 * progress. Any operation registers its kind of work once with `define()`.
 */
export class AsyncJobs {
  private readonly handlers = new Map<string, AsyncJobHandler<unknown>>();
  /** How a completed job of a type answers its status URL (default: the AsyncJob itself). */
  private readonly views = new Map<string, (job: AsyncJobResource) => unknown>();

  constructor(private readonly deps: AsyncJobsDeps) {
    deps.jobs.define<QueuedAsyncJob>({
      name: ASYNC_QUEUE,
      retryLimit: 2,
      expireInSeconds: 6 * 3600,
      handler: (data, attempt) => this.run(data, attempt),
    });
  }

  define<P>(kind: string, handler: AsyncJobHandler<P>): void {
    this.handlers.set(kind, handler as AsyncJobHandler<unknown>);
  }

  /** A completed job of `type` answers its status URL with `view(job)` (e.g. the $export manifest). */
  completedView(type: AsyncJobType, view: (job: AsyncJobResource) => unknown): void {
    this.views.set(type, view);
  }

  /** Accepts the request for asynchronous processing, as the caller: 202 with Content-Location. */
  async start<P>(
    input: Pick<OperationInput, 'url'> & { context: Pick<OperationInput['context'], 'repo' | 'fhirBase'> },
    kind: string,
    params: P,
    type?: AsyncJobType,
  ): Promise<OperationResult> {
    const { repo, fhirBase } = input.context;
    if (!this.handlers.has(kind)) {
      fail(badRequest(`No asynchronous processing for ${kind}`));
    }
    const job: AsyncJobResource = {
      resourceType: 'AsyncJob',
      status: 'accepted',
      requestTime: new Date().toISOString(),
      request: input.url,
      ...(type ? { type } : {}),
    };
    const created = (await repo.createResource(job)).resource as AsyncJobResource;
    const queued: QueuedAsyncJob = {
      asyncJobId: created.id as string,
      projectId: created.meta?.project as string,
      kind,
      params,
      requester: repo.scope.author?.reference,
    };
    await this.deps.jobs.send(ASYNC_QUEUE, queued);
    return jsonResult(created, 202, { 'content-location': `${fhirBase}job/${created.id}/status` });
  }

  private async update(
    projectId: string,
    id: string,
    change: (job: AsyncJobResource) => AsyncJobResource | undefined,
  ): Promise<AsyncJobResource> {
    const repo = this.deps.systemRepo(projectId);
    for (let attempt = 0; ; attempt++) {
      const current = await repo.readResource('AsyncJob', id);
      const next = change(current.resource as AsyncJobResource);
      if (!next) {
        return current.resource as AsyncJobResource;
      }
      try {
        return (await repo.updateResource(next, { ifMatch: current.versionId })).resource as AsyncJobResource;
      } catch (err) {
        if (attempt >= 5 || (err as { status?: number }).status !== 412) {
          throw err;
        }
      }
    }
  }

  private async run(data: QueuedAsyncJob, attempt: JobAttempt): Promise<unknown> {
    const { projectId, asyncJobId } = data;
    const handler = this.handlers.get(data.kind);
    const started = await this.update(projectId, asyncJobId, (job) =>
      job.status === 'cancelled' || job.status === 'completed' ? undefined : { ...job, status: 'active' },
    );
    if (started.status !== 'active') {
      return { skipped: started.status };
    }
    const repo = data.requester
      ? await this.deps.members.forProfile(projectId, data.requester).catch(() => this.deps.systemRepo(projectId))
      : this.deps.systemRepo(projectId);
    const context: AsyncJobContext = {
      asyncJobId,
      projectId,
      repo,
      progress: async (fraction, message, counts) => {
        await this.update(projectId, asyncJobId, (job) =>
          job.status !== 'active'
            ? undefined
            : {
                ...job,
                extension: [
                  ...(job.extension ?? []).filter((e) => e.url !== PROGRESS_EXTENSION),
                  {
                    url: PROGRESS_EXTENSION,
                    extension: [
                      { url: 'fraction', valueDecimal: Math.max(0, Math.min(1, fraction)) },
                      ...(message ? [{ url: 'message', valueString: message }] : []),
                      ...(counts
                        ? [
                            { url: 'done', valueInteger: counts.done },
                            { url: 'total', valueInteger: counts.total },
                          ]
                        : []),
                    ],
                  },
                ],
              },
        );
      },
      cancelled: async () => {
        const { resource } = await this.deps.systemRepo(projectId).readResource('AsyncJob', asyncJobId);
        return (resource as AsyncJobResource).status === 'cancelled';
      },
    };
    try {
      if (!handler) {
        throw new Error(`No handler for asynchronous ${data.kind} in this server version`);
      }
      const output = await handler(data.params, context);
      await this.update(projectId, asyncJobId, (job) =>
        job.status === 'cancelled'
          ? undefined
          : {
              ...withoutProgress(job),
              status: 'completed',
              transactionTime: new Date().toISOString(),
              ...(output ? { output } : {}),
            },
      );
      return { completed: true };
    } catch (err) {
      const outcome: OperationOutcome =
        (err as { outcome?: OperationOutcome }).outcome ??
        serverError(err instanceof Error ? err : new Error(String(err)));
      this.deps.logger.warn(
        { err, asyncJobId, kind: data.kind, attempt: attempt.retryCount + 1 },
        'asynchronous job failed',
      );
      if (attempt.retryCount < attempt.retryLimit && !(err as { outcome?: unknown }).outcome) {
        // An unexpected failure (lost connection, crash): the job runs again.
        await this.update(projectId, asyncJobId, (job) =>
          job.status === 'active' ? { ...job, status: 'accepted' } : undefined,
        );
        throw err;
      }
      await this.update(projectId, asyncJobId, (job) =>
        job.status === 'cancelled'
          ? undefined
          : {
              ...withoutProgress(job),
              status: 'error',
              transactionTime: new Date().toISOString(),
              output: { resourceType: 'Parameters', parameter: [{ name: 'outcome', resource: outcome }] },
            },
      );
      return { failed: true };
    }
  }

  /** GET [base]/job/{id}/status: 202 with X-Progress while running; 200 with the AsyncJob when done; an error's OperationOutcome. */
  async status(repo: Repository, id: string): Promise<OperationResult> {
    const job = (await repo.readResource('AsyncJob', id)).resource as AsyncJobResource;
    switch (job.status) {
      case 'accepted':
      case 'active': {
        const parts = job.extension?.find((e) => e.url === PROGRESS_EXTENSION)?.extension ?? [];
        const fraction = parts.find((e) => e.url === 'fraction')?.valueDecimal;
        const message = parts.find((e) => e.url === 'message')?.valueString;
        const text =
          job.status === 'accepted'
            ? 'queued'
            : fraction !== undefined
              ? `${Math.round(fraction * 100)}%${message ? ` ${message}` : ''}`
              : 'in progress';
        return jsonResult(job, 202, { 'x-progress': text, 'retry-after': '1' });
      }
      case 'error': {
        const outcome = (
          job.output as { parameter?: { name: string; resource?: OperationOutcome }[] } | undefined
        )?.parameter?.find((p) => p.name === 'outcome')?.resource;
        // The job's own outcome decides: a user's bad input stays a 4xx, as it would have been synchronously.
        return outcome
          ? jsonResult(outcome, Math.max(getStatus(outcome), 400))
          : jsonResult(serverError(new Error('The job failed')), 500);
      }
      case 'cancelled':
        return fail(notFoundWith(`AsyncJob/${id} was cancelled`));
      default: {
        const view = job.type ? this.views.get(job.type) : undefined;
        return view
          ? { body: JSON.stringify(view(job)), contentType: 'application/json; charset=utf-8' }
          : jsonResult(job);
      }
    }
  }

  /** DELETE [base]/job/{id}/status: cancels the job (a running step finishes; no further output). */
  async cancel(repo: Repository, id: string): Promise<OperationResult> {
    const current = await repo.readResource('AsyncJob', id);
    const job = current.resource as AsyncJobResource;
    if (job.status === 'accepted' || job.status === 'active') {
      await repo.updateResource({ ...job, status: 'cancelled', transactionTime: new Date().toISOString() });
    }
    return { status: 202 };
  }
}
