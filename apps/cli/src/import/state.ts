/**
 * The resume state of an import: per file, which chunks are done and which items failed. Saved
 * after every chunk (atomically), so that an import stopped anyhow resumes where it was; named
 * after what is imported where, so that running the same command again finds it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CliError } from '../output.js';
import { ensurePrivateDir, hearthHome, writePrivateFile } from '../profiles.js';
import type { ImportMode } from './sources.js';

/** A chunk's outcome: done, or failed (the indexes of its items that failed). */
export type ChunkState = { status: 'done' } | { status: 'failed'; failed: number[] };

export interface FileState {
  fingerprint: string;
  chunks: Record<string, ChunkState>;
}

export interface ImportStateData {
  version: 1;
  startedAt: string;
  baseUrl: string;
  project: string;
  mode: ImportMode;
  batchSize: number;
  files: Record<string, FileState>;
}

export interface ImportKey {
  baseUrl: string;
  project: string;
  mode: ImportMode;
  batchSize: number;
  files: string[];
}

/** ~/.hearth/imports/<hash of server, project, mode, chunk size and files>.json */
export function defaultStatePath(key: ImportKey): string {
  const hash = createHash('sha256')
    .update(JSON.stringify({ ...key, files: [...key.files].sort() }))
    .digest('hex')
    .slice(0, 20);
  return join(hearthHome(), 'imports', `${hash}.json`);
}

export class ImportState {
  private constructor(
    readonly path: string,
    readonly data: ImportStateData,
    /** True when the state came from an earlier run. */
    readonly resumed: boolean,
  ) {}

  /** The state at `path` when it is of this import (unless `restart`), else a fresh one. */
  static open(path: string, key: ImportKey, restart: boolean): ImportState {
    if (!restart && existsSync(path)) {
      let data: ImportStateData;
      try {
        data = JSON.parse(readFileSync(path, 'utf8')) as ImportStateData;
      } catch (err) {
        throw new CliError(`The import state ${path} is not valid JSON (${(err as Error).message}): add --restart`);
      }
      if (data.version === 1 && data.mode === key.mode && data.batchSize === key.batchSize) {
        return new ImportState(path, data, true);
      }
      throw new CliError(
        `The import state ${path} is of another import (${data.mode}, chunks of ${data.batchSize}): add --restart to start over`,
      );
    }
    const data: ImportStateData = {
      version: 1,
      startedAt: new Date().toISOString(),
      baseUrl: key.baseUrl,
      project: key.project,
      mode: key.mode,
      batchSize: key.batchSize,
      files: {},
    };
    return new ImportState(path, data, false);
  }

  /** The state of a file; a file that changed since (other fingerprint) starts over. Returns whether it changed. */
  prepareFile(path: string, fingerprint: string): boolean {
    const current = this.data.files[path];
    if (current && current.fingerprint === fingerprint) {
      return false;
    }
    this.data.files[path] = { fingerprint, chunks: {} };
    return current !== undefined;
  }

  chunk(path: string, index: number): ChunkState | undefined {
    return this.data.files[path]?.chunks[String(index)];
  }

  setChunk(path: string, index: number, state: ChunkState): void {
    this.data.files[path].chunks[String(index)] = state;
    this.save();
  }

  /** Chunks recorded as done / failed over all files. */
  counts(): { done: number; failed: number } {
    let done = 0;
    let failed = 0;
    for (const file of Object.values(this.data.files)) {
      for (const chunk of Object.values(file.chunks)) {
        if (chunk.status === 'done') {
          done++;
        } else {
          failed++;
        }
      }
    }
    return { done, failed };
  }

  save(): void {
    const dir = dirname(this.path);
    if (dir === join(hearthHome(), 'imports')) {
      ensurePrivateDir(hearthHome());
      ensurePrivateDir(dir);
    } else {
      // A --state file elsewhere: its directory is the user's, left as it is.
      mkdirSync(dir, { recursive: true });
    }
    writePrivateFile(this.path, `${JSON.stringify(this.data)}\n`);
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }
}
