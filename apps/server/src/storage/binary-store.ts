import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fail, isUUID, notFoundWith, OperationOutcomeError, payloadTooLarge } from '@hearth/core';

export interface StoredContent {
  key: string;
  size: number;
}

/**
 * Binary content as files under `<dataDir>/binary/`, named by a random key (a UUID) that the
 * Binary resource row holds. A file is written under tmp/ and renamed into place, so a reader
 * never sees a partial file and a crash leaves only a stray temp file. Files are immutable:
 * a new version of a Binary gets a new key, so vread of an old version still finds its bytes.
 */
export class BinaryStore {
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

  /** Streams content to a new file; more than maxBytes is a 413 and leaves nothing behind. */
  async write(source: Readable | Buffer): Promise<StoredContent> {
    const key = randomUUID();
    const tmpDir = join(this.root, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    const tmp = join(tmpDir, `${key}.part`);
    let size = 0;
    const max = this.maxBytes;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > max) {
          done(new OperationOutcomeError(payloadTooLarge(`Binary content is larger than ${max} bytes`)));
        } else {
          done(null, chunk);
        }
      },
    });
    const input = Buffer.isBuffer(source) ? Readable.from([source]) : source;
    try {
      await pipeline(input, counter, createWriteStream(tmp, { flags: 'wx' }));
      const final = this.pathOf(key);
      await mkdir(join(this.root, key.slice(0, 2)), { recursive: true });
      await rename(tmp, final);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      if (!Buffer.isBuffer(source) && !source.destroyed) {
        // Stop reading the rest of an oversized or failed upload.
        source.resume();
      }
      throw err;
    }
    return { key, size };
  }

  /** Opens stored content for streaming; 404 when the file is gone. */
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

  /** Removes content nobody refers to (a write that was rolled back). */
  async remove(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch(() => undefined);
  }
}
