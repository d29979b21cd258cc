/**
 * Key rotation when the keys are read again while the new key is being written (every process
 * reloads its keys on a JsonWebKey change notice, the writing one at once): the key that signed
 * until the rotation keeps verifying, and the new key is never retired by its own rotation.
 */
import type { Repository } from '../storage/repository.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { KeyStore } from './keys.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

it("a rotation keeps the key that signed until then, even when a reload lands during the new key's write", async () => {
  let store: KeyStore | undefined = undefined;
  // The system repository, with the reload a change notice starts finished before the write returns.
  const systemRepo = (): Repository => {
    const repo = t.services.systemRepo();
    return new Proxy(repo, {
      get(target, name, receiver) {
        if (name === 'createResource') {
          return async (...args: Parameters<Repository['createResource']>) => {
            const created = await target.createResource(...args);
            await store?.reload();
            return created;
          };
        }
        const value: unknown = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  store = new KeyStore({
    pool: t.pool,
    systemRepo,
    logger: createLogger('silent'),
    algorithm: 'ES256',
    rotationDays: 30,
    retireAfterMs: 14 * 24 * 3600 * 1000,
    issuer: 'http://localhost/',
  });
  await store.rotateIfDue();
  const before = store.publicKeys().keys.map((k) => k.kid);
  expect(before.length).toBeGreaterThan(0);
  const signedBefore = await store.sign({ sub: 'x' }, 60);

  // A year on: a new key is due, and the old one has signed until now.
  await store.rotateIfDue(Date.now() + 365 * 24 * 3600 * 1000);
  const after = store.publicKeys().keys.map((k) => k.kid);
  expect(after.length).toBe(before.length + 1);
  expect(after).toEqual(expect.arrayContaining(before));
  await expect(store.verify(signedBefore)).resolves.toMatchObject({ sub: 'x' });
  store.close();
});
