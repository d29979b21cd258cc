import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { OperationOutcomeError } from '@hearth/core';
import { FileBinaryStore } from './file-binary-store.js';

const root = mkdtempSync(join(tmpdir(), 'hearth-binary-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function chunks(count: number, size: number): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < count; i++) {
        yield Buffer.alloc(size, i);
      }
    })(),
  );
}

describe('FileBinaryStore', () => {
  const store = new FileBinaryStore(root, 10_000);

  it('writes a stream to a file named by a new key and reads it back', async () => {
    const { key, size } = await store.write(chunks(3, 1000));
    expect(size).toBe(3000);
    const { stream, size: stored } = await store.open(key);
    expect(stored).toBe(3000);
    const back = Buffer.concat(await stream.toArray());
    expect(back.equals(Buffer.concat([Buffer.alloc(1000, 0), Buffer.alloc(1000, 1), Buffer.alloc(1000, 2)]))).toBe(
      true,
    );
  });

  it('stops a stream over the limit with a 413 and leaves no partial file', async () => {
    const err = await store.write(chunks(20, 1000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect((err as OperationOutcomeError).status).toBe(413);
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });

  it('answers 404 for missing content and refuses keys that are not UUIDs', async () => {
    const missing = await store.open('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect((missing as OperationOutcomeError).status).toBe(404);
    await expect(store.open('../../etc/passwd')).rejects.toThrow();
  });
});
