/**
 * The import: every file's chunks sent as transaction (or batch) Bundles, the resume state saved
 * after each chunk, progress on stderr, and at the end a summary of what failed and why (the
 * server's OperationOutcome messages).
 */
import { basename } from 'node:path';
import {
  operationOutcomeToString,
  OperationOutcomeError,
  type Bundle,
  type BundleEntry,
  type OperationOutcome,
} from '@hearth/core';
import type { CliClient } from '../client.js';
import { describeOutcome, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, info } from '../output.js';
import { createProgress, type ProgressMode } from '../progress.js';
import { findFiles, openImportFile, type Chunk, type ImportFile, type ImportItem, type ImportMode } from './sources.js';
import { defaultStatePath, ImportState } from './state.js';

export interface ImportOptions {
  mode: ImportMode;
  batchSize: number;
  concurrency: number;
  statePath?: string;
  restart: boolean;
  failFast: boolean;
  progress: ProgressMode;
  /** Retries of a chunk the server turned away for now (429, 502, 503, 504, no connection). */
  retries: number;
  /** Base of the retry delay, doubled per attempt. */
  retryDelayMs: number;
}

export interface ImportFailure {
  file: string;
  where: string;
  request?: string;
  message: string;
}

const RETRYABLE = new Set([429, 502, 503, 504]);
const MAX_LISTED_FAILURES = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function requestLabel(entry: BundleEntry | undefined): string | undefined {
  return entry?.request ? `${entry.request.method} ${entry.request.url}` : undefined;
}

/** The project the session acts in, for the state's name ('' when the server does not say). */
async function projectOf(hearth: CliClient): Promise<string> {
  const fromToken = hearth.getProject()?.reference;
  if (fromToken) {
    return fromToken;
  }
  try {
    const details = await hearth.getSessionDetails();
    return details?.project?.id ? `Project/${details.project.id}` : '';
  } catch {
    return '';
  }
}

export class Importer {
  private readonly failures: ImportFailure[] = [];
  private stopping = false;
  private done = 0;
  private skipped = 0;
  private chunksDone = 0;
  private total = 0;
  private totalChunks = 0;
  private sent = 0;

  constructor(
    private readonly hearth: CliClient,
    private readonly options: ImportOptions,
  ) {}

  /** Asks the import to stop after the chunks in flight (Ctrl-C). */
  stop(): void {
    this.stopping = true;
  }

  async run(args: string[]): Promise<number> {
    const { options } = this;
    const paths = findFiles(args);
    const key = {
      baseUrl: this.hearth.getBaseUrl(),
      project: await projectOf(this.hearth),
      mode: options.mode,
      batchSize: options.batchSize,
      files: paths,
    };
    const state = ImportState.open(options.statePath ?? defaultStatePath(key), key, options.restart);
    const files: ImportFile[] = [];
    for (const path of paths) {
      const file = await openImportFile(path, options.batchSize, options.mode);
      if (state.prepareFile(path, file.fingerprint)) {
        info(`${basename(path)} changed since the earlier run: importing it from the start`);
      }
      files.push(file);
    }
    this.total = files.reduce((n, f) => n + f.count, 0);
    this.totalChunks = files.reduce((n, f) => n + f.chunkCount, 0);
    if (state.resumed) {
      const { done, failed } = state.counts();
      info(
        `Resuming the import started ${state.data.startedAt}: ${done} of ${this.totalChunks} chunks done, ` +
          `${failed} to retry (state: ${state.path})`,
      );
    }
    state.save();
    const progress = createProgress(options.progress, 'import', 'resources');
    const show = (file: string) =>
      progress.update({
        value: this.done,
        total: this.total,
        detail: `${this.chunksDone}/${this.totalChunks} chunks, ${this.failures.length} failed, ${basename(file)}`,
      });
    try {
      for (const file of files) {
        if (this.stopping) {
          break;
        }
        await this.importFile(file, state, () => show(file.path));
      }
    } finally {
      progress.stop();
    }
    return this.finish(state, files.length);
  }

  private async importFile(file: ImportFile, state: ImportState, show: () => void): Promise<void> {
    const chunks = file.chunks((index) => state.chunk(file.path, index)?.status !== 'done');
    const worker = async () => {
      for (;;) {
        if (this.stopping) {
          return;
        }
        const next = await chunks.next();
        if (next.done) {
          return;
        }
        await this.importChunk(file, next.value, state);
        show();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.options.concurrency) }, worker));
  }

  private async importChunk(file: ImportFile, chunk: Chunk, state: ImportState): Promise<void> {
    const prior = state.chunk(file.path, chunk.index);
    if (prior?.status === 'done') {
      this.skipped += chunk.items.length;
      this.done += chunk.items.length;
      this.chunksDone++;
      return;
    }
    // A chunk that failed before: only its failed items go again.
    const retry = prior?.status === 'failed' ? new Set(prior.failed) : undefined;
    const indexes = chunk.items.map((_, i) => i).filter((i) => !retry || retry.has(i));
    this.done += chunk.items.length - indexes.length;
    const failed: number[] = [];
    const fail = (i: number, message: string) => {
      failed.push(i);
      const item = chunk.items[i];
      this.failures.push({ file: file.path, where: item.where, request: requestLabel(item.entry), message });
    };
    const valid: number[] = [];
    for (const i of indexes) {
      if (chunk.items[i].invalid) {
        fail(i, chunk.items[i].invalid as string);
      } else {
        valid.push(i);
      }
    }
    if (valid.length) {
      const bundle: Bundle = {
        resourceType: 'Bundle',
        type: chunk.type,
        entry: valid.map((i) => chunk.items[i].entry as BundleEntry),
      };
      const answer = await this.send(bundle);
      if (answer instanceof OperationOutcomeError) {
        if (answer.status === 401) {
          // The session is gone: no chunk can succeed; what was done is saved for the rerun.
          state.setChunk(file.path, chunk.index, { status: 'failed', failed: indexes });
          throw answer;
        }
        const message = this.locate(describeOutcome(answer), chunk.items, valid);
        valid.forEach((i) => fail(i, message));
      } else if (chunk.type === 'batch') {
        (answer.entry ?? []).forEach((entry, k) => {
          const status = entry.response?.status ?? '';
          if (!/^2\d\d/.test(status) && valid[k] !== undefined) {
            const outcome = entry.response?.outcome as OperationOutcome | undefined;
            fail(valid[k], `${status}${outcome ? `: ${operationOutcomeToString(outcome)}` : ''}`);
          }
        });
      }
    }
    this.sent += valid.length - failed.filter((i) => valid.includes(i)).length;
    this.done += indexes.length;
    this.chunksDone++;
    state.setChunk(
      file.path,
      chunk.index,
      failed.length ? { status: 'failed', failed: failed.sort((a, b) => a - b) } : { status: 'done' },
    );
    if (failed.length && this.options.failFast) {
      this.stopping = true;
    }
  }

  /** Sends a chunk, retrying when the server turns it away for now. Errors are returned, not thrown. */
  private async send(bundle: Bundle): Promise<Bundle | OperationOutcomeError> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.hearth.executeBatch(bundle);
      } catch (err) {
        if (!(err instanceof OperationOutcomeError)) {
          throw err;
        }
        if (!RETRYABLE.has(err.status) || attempt >= this.options.retries || this.stopping) {
          return err;
        }
        await sleep(this.options.retryDelayMs * 2 ** attempt);
      }
    }
  }

  /** Names the item a transaction's outcome points at ('Bundle.entry[3]...' is the 4th sent). */
  private locate(message: string, items: ImportItem[], sent: number[]): string {
    const match = /Bundle\.entry\[(\d+)\]/.exec(message);
    const item = match ? items[sent[Number(match[1])]] : undefined;
    return item ? `${message} [at ${item.where}]` : message;
  }

  private finish(state: ImportState, fileCount: number): number {
    const previously = this.skipped ? ` (${this.skipped} done in an earlier run)` : '';
    console.log(
      `Imported ${this.sent} resources from ${fileCount} file${fileCount === 1 ? '' : 's'} ` +
        `(${this.chunksDone} of ${this.totalChunks} chunks)${previously}; ${this.failures.length} failed`,
    );
    if (this.failures.length) {
      info(`\nFailures (${this.failures.length}):`);
      for (const f of this.failures.slice(0, MAX_LISTED_FAILURES)) {
        info(`  ${basename(f.file)} ${f.where}${f.request ? ` (${f.request})` : ''}: ${f.message}`);
      }
      if (this.failures.length > MAX_LISTED_FAILURES) {
        info(`  ... and ${this.failures.length - MAX_LISTED_FAILURES} more`);
      }
    }
    if (this.stopping && this.chunksDone < this.totalChunks) {
      info(`Stopped: run the same command again to resume (state: ${state.path})`);
      return this.failures.length && this.options.failFast ? EXIT_FAILURE : EXIT_INTERRUPTED;
    }
    if (this.failures.length) {
      info(`Run the same command again to retry the failed ones (state: ${state.path})`);
      return EXIT_FAILURE;
    }
    state.remove();
    return EXIT_OK;
  }
}
