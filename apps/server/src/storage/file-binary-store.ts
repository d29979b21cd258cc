import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fail, isUUID, notFoundWith } from '@hearth/core';
import { discardRest, sizeLimit, type BinaryStore, type StoredContent } from './binary-store.js';

/**
 * Binary content as files under `<dataDir>/binary/`, named by the key. A file is written under
 * tmp/ and renamed into place, so a reader never sees a partial file and a crash leaves only a
 * stray temp file. Processes on one database must share the directory to see each other's content.
 */
export class FileBinaryStore implements BinaryStore {
  private readonly root: string;
  readonly maxBytes: number;

  constructor(root: string, maxBytes: number) {
    this.root = resolve(root);
    this.maxBytes = maxBytes;
  }

  private pathOf(key: string): string {
    if (!isUUID(key)) {
      throw new Error(`Invalid binary storage key: ${key}`);
    }
    return join(this.root, key.slice(0, 2), key);
  }

  async write(source: Readable | Buffer): Promise<StoredContent> {
    const key = randomUUID();
    const tmpDir = join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = join(tmpDir, `${key}.part`);
    const input = Buffer.isBuffer(source) ? Readable.from([source]) : source;
    try {
      await pipeline(input, sizeLimit(this.maxBytes), createWriteStream(tmp, { flags: 'wx' }));
      const final = this.pathOf(key);
      await mkdir(join(this.root, key.slice(0, 2)), { recursive: true });
      await rename(tmp, final);
      return { key, size: (await stat(final)).size };
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      discardRest(source);
      throw err;
    }
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    const path = this.pathOf(key);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      fail(notFoundWith('The content of this Binary is not available'));
    }
    return { stream: createReadStream(path), size };
  }

  async remove(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch(() => undefined);
  }
}
