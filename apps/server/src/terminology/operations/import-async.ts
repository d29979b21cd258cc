// CodeSystem/$import with `Prefer: respond-async`: the body is spooled to a file, the answer is
// 202 with the AsyncJob's status URL, and the import runs in this process, recording its progress.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { serverError, type OperationOutcome, type Resource } from '@hearth/core';
import { PROGRESS_EXTENSION } from '../../jobs/async-job.js';
import { jsonResult } from '../../operations/result.js';
import type { OperationInput, OperationResult } from '../../operations/types.js';
import type { Logger } from '../../platform/logger.js';
import type { Repository } from '../../storage/repository.js';
import type { ImportConcept } from '../import/importer.js';
import type { CodeSystemRow } from '../resolve.js';
import type { TerminologyDeps } from './context.js';
import { importConcepts, statsParameters } from './import-run.js';

interface AsyncJob extends Resource {
  status: 'accepted' | 'active' | 'completed' | 'error' | 'cancelled';
  requestTime: string;
  request: string;
  transactionTime?: string;
  output?: Resource;
  extension?: { url: string; extension?: { url: string; valueDecimal?: number; valueString?: string }[] }[];
}

/** Thrown inside the import when its AsyncJob was cancelled: the transaction rolls back. */
class ImportCancelled extends Error {}

/**
 * Accepts a streamed import for asynchronous processing (hl7.org/fhir/R4/async.html): the body is
 * written to a temporary file first (so a slow import never holds the upload), an AsyncJob records
 * the request, and the answer is 202 with Content-Location `[base]/job/{id}/status`, which answers
 * 202 with `X-Progress: 40% 120000 concepts` while the import runs (the share of the file read)
 * and 200 with the AsyncJob, its output the import's Parameters, once done. DELETE on the status
 * URL cancels: the import rolls back at its next batch.
 */
export async function startAsyncImport(
  deps: TerminologyDeps,
  input: OperationInput,
  cs: CodeSystemRow,
  body: Readable,
  source: (body: Readable, onSkip: () => void) => AsyncIterable<ImportConcept>,
  logger: Logger,
): Promise<OperationResult> {
  const { repo, fhirBase } = input.context;
  const spool = join(tmpdir(), `hearth-import-${randomUUID()}.part`);
  try {
    await pipeline(body, createWriteStream(spool, { flags: 'wx' }));
  } catch (err) {
    await unlink(spool).catch(() => undefined);
    throw err;
  }
  const size = (await stat(spool)).size;
  let job: AsyncJob;
  try {
    job = (
      await repo.createResource<AsyncJob>({
        resourceType: 'AsyncJob',
        status: 'active',
        requestTime: new Date().toISOString(),
        request: input.url,
      })
    ).resource;
  } catch (err) {
    await unlink(spool).catch(() => undefined);
    throw err;
  }
  void runImport(deps, repo, job.id as string, cs, spool, size, source, logger);
  return jsonResult(job, 202, { 'content-location': `${fhirBase}job/${job.id}/status` });
}

async function runImport(
  deps: TerminologyDeps,
  repo: Repository,
  jobId: string,
  cs: CodeSystemRow,
  spool: string,
  size: number,
  source: (body: Readable, onSkip: () => void) => AsyncIterable<ImportConcept>,
  logger: Logger,
): Promise<void> {
  let bytes = 0;
  let skipped = 0;
  const counted = createReadStream(spool).pipe(
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    }),
  );
  try {
    const stats = await importConcepts(
      deps,
      cs,
      source(counted, () => skipped++),
      logger,
      async (concepts) => {
        const fraction = size > 0 ? Math.min(bytes / size, 0.99) : 0;
        await updateJob(repo, jobId, (current) => {
          if (current.status === 'cancelled') {
            throw new ImportCancelled();
          }
          return {
            ...current,
            extension: [
              ...(current.extension ?? []).filter((e) => e.url !== PROGRESS_EXTENSION),
              {
                url: PROGRESS_EXTENSION,
                extension: [
                  { url: 'fraction', valueDecimal: Math.round(fraction * 1000) / 1000 },
                  { url: 'message', valueString: `${concepts} concepts` },
                ],
              },
            ],
          };
        });
      },
    );
    await updateJob(repo, jobId, (current) =>
      current.status === 'cancelled'
        ? undefined
        : {
            ...withoutProgress(current),
            status: 'completed',
            transactionTime: new Date().toISOString(),
            output: statsParameters(cs, { ...stats, skipped: stats.skipped + skipped }),
          },
    );
  } catch (err) {
    counted.destroy();
    if (err instanceof ImportCancelled) {
      logger.info({ system: cs.url, jobId }, 'code system import cancelled');
      return;
    }
    const outcome: OperationOutcome =
      (err as { outcome?: OperationOutcome }).outcome ??
      serverError(err instanceof Error ? err : new Error(String(err)));
    logger.warn({ err, system: cs.url, jobId }, 'asynchronous code system import failed');
    await updateJob(repo, jobId, (current) =>
      current.status === 'cancelled'
        ? undefined
        : {
            ...withoutProgress(current),
            status: 'error',
            transactionTime: new Date().toISOString(),
            output: { resourceType: 'Parameters', parameter: [{ name: 'outcome', resource: outcome }] } as Resource,
          },
    ).catch((e: unknown) => logger.error({ err: e, jobId }, 'could not record the import failure'));
  } finally {
    await unlink(spool).catch(() => undefined);
  }
}

function withoutProgress(job: AsyncJob): AsyncJob {
  const { extension, ...rest } = job;
  const kept = (extension ?? []).filter((e) => e.url !== PROGRESS_EXTENSION);
  return kept.length > 0 ? { ...rest, extension: kept } : rest;
}

/** Read, change, write with If-Match (a cancel may land in between); `undefined` leaves it as is. */
async function updateJob(repo: Repository, id: string, change: (job: AsyncJob) => AsyncJob | undefined): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = await repo.readResource<AsyncJob>('AsyncJob', id);
    const next = change(current.resource);
    if (!next) {
      return;
    }
    try {
      await repo.updateResource(next, { ifMatch: current.versionId });
      return;
    } catch (err) {
      if (attempt >= 5 || (err as { status?: number }).status !== 412) {
        throw err;
      }
    }
  }
}
