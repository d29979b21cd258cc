/**
 * Runs every runnable example of the guides (docs/**.md, blocks marked `ts runnable`) against a
 * real Hearth server, each as its own test named by file and line: an example that throws or
 * whose assertion fails fails here. See extract.ts for what a block may use.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthClient, MemoryStorage } from '@hearth/core';
import { createTestApp, type TestApp } from '../../../server/src/test/app.js';
import { collectRunnable, toModule } from './extract.js';

const DOCS = resolve(import.meta.dirname, '../../../../docs');
// Inside the repository, so that the examples' imports (@hearth/core) resolve as the tests' do.
const WORK = resolve(import.meta.dirname, '../../.generate/runnable');
const blocks = collectRunnable(DOCS);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ listen: true });
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
});
afterAll(async () => {
  await t?.close();
});

/** A fresh client signed in as the test project's admin, as the guides assume. */
async function signedIn(): Promise<HearthClient> {
  const hearth = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
  await hearth.signInWithPassword({ email: t.testProject.email, password: t.testProject.password });
  return hearth;
}

describe('runnable examples in the guides', () => {
  it('the guides that talk to a server have runnable examples', () => {
    const perGroup = (prefix: string) => blocks.filter((b) => b.file.startsWith(prefix)).length;
    expect(perGroup('search/')).toBeGreaterThanOrEqual(8);
    expect(perGroup('auth')).toBeGreaterThanOrEqual(2);
    expect(perGroup('subscriptions/')).toBeGreaterThanOrEqual(2);
    expect(perGroup('bots')).toBeGreaterThanOrEqual(2);
    expect(perGroup('tutorials/')).toBeGreaterThanOrEqual(3);
  });

  it.each(blocks.map((b) => [`${b.file}:${b.line}`, b] as const))('%s', async (name, block) => {
    const file = join(WORK, `${name.replace(/[^\w]+/g, '_')}.ts`);
    writeFileSync(file, toModule(block));
    const module = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
      default: (scope: { hearth: HearthClient; baseUrl: string }) => Promise<void>;
    };
    await module.default({ hearth: await signedIn(), baseUrl: t.baseUrl });
  });
});
