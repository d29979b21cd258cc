/**
 * Bulk Data $import (POST [base]/$import with a manifest; manifest.ts): asynchronous like $export
 * (202 + Content-Location of an AsyncJob, X-Progress while it runs, DELETE cancels). Each input's
 * NDJSON is fetched through the outbound address rules (platform/outbound-http.ts), or read from a
 * Binary of the project, and written as the requester (their access policy applies), a batch of
 * lines at a time through Repository.prepareBulk / writeBulk (storage/bulk-write.ts): validation
 * and index rows exactly as any write, ids kept (a stored id gets a new version), and the
 * resource, history and index rows of the whole batch written with COPY in one transaction, while
 * the next batch is checked. A line that is not JSON, not of the input's type, or not valid
 * becomes an OperationOutcome (with its input and line number) in the result's error file; the
 * other lines of its batch are written. Listeners (subscriptions) hear of every write, as of any
 * other. The tables written are ANALYZEd at the end.
 */
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import {
  badRequest,
  fail,
  findUnstorable,
  generateId,
  isValidId,
  type OperationOutcome,
  type Resource,
} from '@hearth/core';
import { exportManifest } from '../export/bulk-export.js';
import type { AsyncJobContext, AsyncJobs } from '../jobs/async-job.js';
import { prefersAsync } from '../operations/input.js';
import type { OperationRegistry } from '../operations/registry.js';
import { outboundRequest, type OutboundPolicy } from '../platform/outbound-http.js';
import type { Pool } from '../platform/postgres.js';
import { INDEX_TABLES } from '../storage/migrations/0100-search-index.js';
import { AnalyzeHold } from '../storage/analyze-hold.js';
import { storageKeyOf, withStorageKey } from '../storage/binary-key.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { PreparedBulk } from '../storage/bulk-write.js';
import type { Repository } from '../storage/repository.js';
import { historyTable, resourceTable } from '../storage/tables.js';
import { BULK_IMPORT } from './definition.js';
import { parseManifest, type ImportInput, type ImportManifest } from './manifest.js';

export const IMPORT_KIND = 'bulk-import';
/** Lines written per batch (one transaction: COPY of the resource, history and index rows). */
export const IMPORT_BATCH = 1000;

export interface BulkImportDeps {
  asyncJobs: AsyncJobs;
  binaryStore: BinaryStore;
  pool: Pool;
  outbound: OutboundPolicy;
  outboundTimeoutMs: number;
}

interface ImportParams extends ImportManifest {
  fhirBase: string;
}

interface InputResult {
  type: string;
  url: string;
  count: number;
}

class ImportCancelled extends Error {}

/** The search tables an import writes: the index tables and the distinct string values (migration 104). */
const SEARCH_TABLES = [...INDEX_TABLES, 'search_string_text'];

function lineOutcome(input: ImportInput, line: number, text: string, expression?: string): OperationOutcome {
  return {
    resourceType: 'OperationOutcome',
    issue: [
      {
        severity: 'error',
        code: 'invalid',
        diagnostics: `${input.url} line ${line}: ${text}`,
        ...(expression ? { expression: [expression] } : {}),
      },
    ],
  };
}

/** The lines of one input: a Binary of the project, or a URL fetched through the outbound rules. */
async function openInput(
  deps: BulkImportDeps,
  repo: Repository,
  input: ImportInput,
  fhirBase: string,
): Promise<Readable> {
  const binaryId =
    /^Binary\/([^/]+)$/.exec(input.url)?.[1] ??
    (input.url.startsWith(`${fhirBase}Binary/`) ? input.url.slice(fhirBase.length + 7) : undefined);
  if (binaryId) {
    const binary = (await repo.readResource('Binary', binaryId)).resource as Resource & { data?: string };
    const key = storageKeyOf(binary);
    if (key) return (await deps.binaryStore.open(key)).stream;
    return Readable.from(Buffer.from(binary.data ?? '', 'base64'));
  }
  const response = await outboundRequest(deps.outbound, {
    url: input.url,
    headers: { accept: 'application/fhir+ndjson' },
    timeoutMs: deps.outboundTimeoutMs,
    maxResponseBytes: deps.binaryStore.maxBytes,
  });
  if (response.status !== 200) throw new Error(`GET ${input.url} answered ${response.status} ${response.statusText}`);
  return Readable.from(response.body);
}

/** The OperationOutcome of a line the repository refused. */
function refused(input: ImportInput, line: number, outcome: OperationOutcome): OperationOutcome {
  const issue = outcome.issue?.[0];
  return lineOutcome(input, line, issue?.diagnostics ?? issue?.details?.text ?? 'not written', issue?.expression?.[0]);
}

/** Why a parsed line cannot be imported before any write is tried; undefined when it may be. */
function lineProblem(input: ImportInput, line: number, text: string, value: unknown): OperationOutcome | undefined {
  const resource = value as Resource | null;
  if (!resource || typeof resource !== 'object' || resource.resourceType !== input.type) {
    return lineOutcome(input, line, `not a ${input.type}`, 'resourceType');
  }
  if (resource.id === undefined) resource.id = generateId();
  if (!isValidId(resource.id)) {
    return lineOutcome(input, line, `id ${String(resource.id)} is not a valid id`, `${input.type}.id`);
  }
  // Text PostgreSQL cannot store (a NUL, an unpaired surrogate) comes only from a JSON escape, as
  // for a request body (http/storable-input.ts); such a line would fail its batch's COPY.
  const found = text.includes('\\u') ? findUnstorable(resource) : undefined;
  if (found) {
    const where = found.inName ? `a property name in ${found.path}` : found.path;
    return lineOutcome(input, line, `${where} contains ${found.what}, which is not allowed`, found.path || undefined);
  }
  return undefined;
}

interface Line {
  line: number;
  resource: Resource;
}

/**
 * Imports one input, a batch of IMPORT_BATCH lines at a time, in a pipeline: while one batch is
 * written (Repository.writeBulk: one transaction, COPY), the next is read, parsed and checked
 * (Repository.prepareBulk: validation and index rows, CPU), so the server's and the database's
 * work overlap. A line whose id is already in the batch being filled starts a new batch: the
 * later line is then an update of the earlier. Returns how many resources were written; each
 * refused line adds an OperationOutcome (in line order) to `errors`.
 */
async function importInput(
  deps: BulkImportDeps,
  job: AsyncJobContext,
  input: ImportInput,
  fhirBase: string,
  errors: OperationOutcome[],
  onBatch: (written: number) => Promise<void>,
): Promise<number> {
  let stream: Readable;
  try {
    stream = await openInput(deps, job.repo, input, fhirBase);
  } catch (err) {
    errors.push(lineOutcome(input, 0, `could not be read: ${(err as Error).message}`));
    return 0;
  }
  const problems: { line: number; outcome: OperationOutcome }[] = [];
  let count = 0;
  let batch: Line[] = [];
  const ids = new Set<string>();
  let writing: Promise<void> | undefined;
  let failure: { err: unknown } | undefined;
  const write = async (lines: Line[], prepared: PreparedBulk): Promise<void> => {
    const results = await job.repo.writeBulk(prepared);
    let written = 0;
    results.forEach((result, i) => {
      if (result.outcome)
        problems.push({ line: lines[i].line, outcome: refused(input, lines[i].line, result.outcome) });
      else written++;
    });
    count += written;
    await onBatch(written);
  };
  /** Waits for the batch being written; its failure (not a line's: the database's) fails the import. */
  const settle = async (): Promise<void> => {
    await writing;
    writing = undefined;
    if (failure) throw failure.err;
    if (await job.cancelled()) throw new ImportCancelled();
  };
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const lines = batch;
    batch = [];
    ids.clear();
    const prepared = await job.repo.prepareBulk(lines.map((l) => l.resource));
    await settle();
    writing = write(lines, prepared).catch((err: unknown) => {
      failure = { err };
    });
  };
  try {
    let line = 0;
    for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
      line++;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        problems.push({ line, outcome: lineOutcome(input, line, 'not JSON') });
        continue;
      }
      const problem = lineProblem(input, line, text, value);
      if (problem) {
        problems.push({ line, outcome: problem });
        continue;
      }
      const resource = value as Resource & { id: string };
      if (ids.has(resource.id)) await flush();
      batch.push({ line, resource });
      ids.add(resource.id);
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    await flush();
    await settle();
  } finally {
    // Whatever ended the import (a cancellation, a failure), the batch in flight is waited for.
    await writing;
    problems.sort((a, b) => a.line - b.line);
    errors.push(...problems.map((p) => p.outcome));
  }
  return count;
}

async function writeErrors(
  deps: BulkImportDeps,
  repo: Repository,
  errors: OperationOutcome[],
): Promise<string | undefined> {
  if (errors.length === 0) return undefined;
  const lines = errors.map((e) => `${JSON.stringify(e)}\n`);
  const { key } = await deps.binaryStore.write(Readable.from(lines.map((l) => Buffer.from(l, 'utf8'))));
  const binary = await repo.createResource(
    withStorageKey({ resourceType: 'Binary', contentType: 'application/fhir+ndjson' }, key),
  );
  return binary.resource.id as string;
}

async function runImport(deps: BulkImportDeps, params: ImportParams, job: AsyncJobContext): Promise<Resource> {
  const transactionTime = new Date().toISOString();
  const errors: OperationOutcome[] = [];
  const results: InputResult[] = [];
  const written = new Set<string>();
  let total = 0;
  // The tables the import fills are analyzed by the import, not at each tenth of growth (analyze-hold.ts).
  const types = [...new Set(params.inputs.map((i) => i.type))];
  const hold = await AnalyzeHold.take(deps.pool, [
    ...types.flatMap((t) => [resourceTable(t), historyTable(t)]),
    ...SEARCH_TABLES,
  ]);
  try {
    for (const [index, input] of params.inputs.entries()) {
      const count = await importInput(deps, job, input, params.fhirBase, errors, async (n) => {
        total += n;
        hold.refresh();
        await job.progress(index / params.inputs.length, `${input.type}: ${total} resources`);
      });
      if (count > 0) written.add(input.type);
      results.push({ type: input.type, url: input.url, count });
      await job.progress((index + 1) / params.inputs.length, `${input.type}: ${total} resources`);
    }
  } catch (err) {
    if (!(err instanceof ImportCancelled)) throw err;
    errors.push({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'information', code: 'informational', diagnostics: `Cancelled after ${total} resources` }],
    });
  } finally {
    // The planner's statistics follow the new rows: the next searches are planned on them.
    try {
      if (written.size > 0) {
        const tables = [...written].flatMap((t) => [resourceTable(t), historyTable(t)]);
        await deps.pool.query(`ANALYZE ${[...tables, ...SEARCH_TABLES].join(', ')}`);
      }
    } finally {
      await hold.release();
    }
  }
  const errorFile = await writeErrors(deps, job.repo, errors);
  const file = (name: string, type: string, url: string, count: number) => ({
    name,
    part: [
      { name: 'type', valueCode: type },
      { name: 'url', valueUri: url },
      { name: 'count', valueInteger: count },
    ],
  });
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'transactionTime', valueInstant: transactionTime },
      ...results.map((r) => file('output', r.type, r.url, r.count)),
      ...(errorFile ? [file('error', 'OperationOutcome', `${params.fhirBase}Binary/${errorFile}`, errors.length)] : []),
    ],
  } as Resource;
}

/** Registers POST [base]/$import and its job. */
export function registerBulkImport(registry: OperationRegistry, deps: BulkImportDeps): void {
  deps.asyncJobs.define<ImportParams>(IMPORT_KIND, (params, job) => runImport(deps, params, job));
  // The same manifest shape as $export's: transactionTime, request, output[], error[].
  deps.asyncJobs.completedView('import', exportManifest);
  registry.register({
    definition: BULK_IMPORT,
    handler: async (input) => {
      if (!prefersAsync(input)) fail(badRequest('$import is asynchronous: send the header Prefer: respond-async'));
      const manifest = parseManifest(input.body);
      return deps.asyncJobs.start(input, IMPORT_KIND, { ...manifest, fhirBase: input.context.fhirBase }, 'import');
    },
  });
}
