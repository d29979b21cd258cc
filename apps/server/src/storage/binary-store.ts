import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { OperationOutcomeError, payloadTooLarge } from '@hearth/core';

export interface StoredContent {
  key: string;
  size: number;
}

/**
 * Where Binary content lives (uploads, bot code, $export files), apart from the JSON tables: the
 * Binary resource row holds only a random key (a UUID). Content is immutable: a new version of a
 * Binary gets a new key, so vread of an old version still finds its bytes.
 * Implementations: PostgresBinaryStore (shared by every process on the database) and
 * FileBinaryStore (files under the data directory); services.ts picks one from HEARTH_BINARY_STORAGE.
 */
export interface BinaryStore {
  /** Largest content accepted; more is a 413. */
  readonly maxBytes: number;
  /** Streams content in under a new key; more than maxBytes is a 413 and leaves nothing behind. */
  write(source: Readable | Buffer): Promise<StoredContent>;
  /** Opens stored content for streaming; 404 when it is gone. */
  open(key: string): Promise<{ stream: Readable; size: number }>;
  /** Removes content nobody refers to (a write that was rolled back). */
  remove(key: string): Promise<void>;
}

/** Passes bytes through, failing with a 413 once more than `max` have gone by. */
export function sizeLimit(max: number): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > max) {
        done(new OperationOutcomeError(payloadTooLarge(`Binary content is larger than ${max} bytes`)));
      } else {
        done(null, chunk);
      }
    },
  });
}

/** Stops reading the rest of an oversized or failed upload, so its sender gets the answer. */
export function discardRest(source: Readable | Buffer): void {
  if (!Buffer.isBuffer(source) && !source.destroyed) {
    source.resume();
  }
}
