/**
 * The SDK's HearthClient against a real Hearth server (listening on a port, on its own database):
 * CRUD, history, versions, conditional create, patch, search and paging, batch and transaction,
 * binaries, caching, errors. When the server has sign-in (/auth/login), the client signs in as the
 * super admin first, and sign-in.test.ts covers the sign-in flows themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HearthClient,
  isGone,
  isNotFound,
  MemoryStorage,
  OperationOutcomeError,
  type Bundle,
  type Observation,
  type Patient,
} from '@hearth/core';
import { createTestApp, type TestApp } from '../app.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, authConfig, hasSignIn } from './server.test-util.js';

let t: TestApp;
let hearth: HearthClient;
const family = `Sdk${Date.now()}`;

beforeAll(async () => {
  t = await createTestApp({ listen: true, config: authConfig() });
  hearth = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
  if (await hasSignIn(t.baseUrl)) {
    await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  }
});
afterAll(async () => {
  await t?.close();
});

describe('HearthClient against a server: CRUD', () => {
  it('creates, reads, updates, patches and deletes, with history and versions', async () => {
    const created = await hearth.createResource<Patient>({
      resourceType: 'Patient',
      name: [{ given: ['Ada'], family }],
      gender: 'female',
    });
    expect(created.id).toBeTruthy();
    expect(created.meta?.versionId).toBeTruthy();

    const read = await hearth.readResource('Patient', created.id as string);
    expect(read.name?.[0].family).toBe(family);

    const updated = await hearth.updateResource({ ...read, birthDate: '1815-12-10' });
    expect(updated.birthDate).toBe('1815-12-10');
    expect(updated.meta?.versionId).not.toBe(read.meta?.versionId);

    const patched = await hearth.patchResource('Patient', created.id as string, [
      { op: 'add', path: '/active', value: true },
    ]);
    expect(patched.active).toBe(true);

    const history = await hearth.readHistory('Patient', created.id as string);
    expect(history.type).toBe('history');
    expect(history.entry).toHaveLength(3);
    const first = await hearth.readVersion('Patient', created.id as string, read.meta?.versionId as string);
    expect(first.birthDate).toBeUndefined();

    await hearth.deleteResource('Patient', created.id as string);
    const err = await hearth.readResource('Patient', created.id as string).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    const outcome = (err as OperationOutcomeError).outcome;
    expect(isGone(outcome) || isNotFound(outcome)).toBe(true);
  });

  it('rejects with the server outcome: unknown id, version conflict, invalid resource', async () => {
    const missing = await hearth.readResource('Patient', 'does-not-exist').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OperationOutcomeError);
    expect(isNotFound((missing as OperationOutcomeError).outcome)).toBe(true);
    expect((missing as OperationOutcomeError).status).toBe(404);

    const p = await hearth.createResource<Patient>({ resourceType: 'Patient', name: [{ family }] });
    await hearth.updateResource({ ...p, active: false });
    const stale = await hearth
      .updateResource({ ...p, active: true }, { ifMatch: p.meta?.versionId })
      .catch((e: unknown) => e);
    expect((stale as OperationOutcomeError).status).toBe(412);

    const invalid = await hearth
      .createResource({ resourceType: 'Patient', gender: 'not-a-gender' } as unknown as Patient)
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(OperationOutcomeError);
    expect((invalid as OperationOutcomeError).status).toBe(400);
    expect((invalid as OperationOutcomeError).message).toMatch(/gender/);
  });

  it('creates conditionally with If-None-Exist', async () => {
    const identifier = [{ system: 'https://sdk.test/mrn', value: `mrn-${Date.now()}` }];
    const a = await hearth.createResourceIfNoneExist<Patient>(
      { resourceType: 'Patient', identifier },
      `identifier=https://sdk.test/mrn|${identifier[0].value}`,
    );
    const b = await hearth.createResourceIfNoneExist<Patient>(
      { resourceType: 'Patient', identifier },
      `Patient?identifier=https://sdk.test/mrn|${identifier[0].value}`,
    );
    expect(b.id).toBe(a.id);
  });
});

describe('HearthClient against a server: search', () => {
  const searchFamily = `Page${Date.now()}`;

  beforeAll(async () => {
    for (let i = 0; i < 5; i++) {
      await hearth.createResource<Patient>({
        resourceType: 'Patient',
        name: [{ given: [`P${i}`], family: searchFamily }],
      });
    }
  });

  it('searches as a Bundle, as resources, and for one', async () => {
    const bundle: Bundle<Patient> = await hearth.search('Patient', { family: searchFamily });
    expect(bundle.type).toBe('searchset');
    expect(bundle.entry).toHaveLength(5);
    const resources = await hearth.searchResources('Patient', { family: searchFamily, _sort: 'given' });
    expect(resources.map((p) => p.name?.[0].given?.[0])).toEqual(['P0', 'P1', 'P2', 'P3', 'P4']);
    expect(resources.bundle.resourceType).toBe('Bundle');
    const one = await hearth.searchOne('Patient', { family: searchFamily, given: 'P3' });
    expect(one?.name?.[0].given).toEqual(['P3']);
    expect(await hearth.searchOne('Patient', { family: 'NoSuchFamily' })).toBeUndefined();
  });

  it('pages through a search by its next links', async () => {
    const pages: number[] = [];
    const names: string[] = [];
    for await (const page of hearth.searchResourcePages('Patient', {
      family: searchFamily,
      _count: 2,
      _sort: 'given',
    })) {
      pages.push(page.length);
      names.push(...page.map((p) => p.name?.[0].given?.[0] as string));
    }
    expect(pages).toEqual([2, 2, 1]);
    expect(names).toEqual(['P0', 'P1', 'P2', 'P3', 'P4']);
  });
});

describe('HearthClient against a server: batch, transaction, binaries, cache', () => {
  it('executes a batch and a transaction with internal references', async () => {
    const batch = await hearth.executeBatch({
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient', name: [{ family }] } },
        { request: { method: 'GET', url: 'Patient/does-not-exist' } },
      ],
    });
    expect(batch.type).toBe('batch-response');
    expect(batch.entry?.[0].response?.status).toMatch(/^201/);
    expect(batch.entry?.[1].response?.status).toMatch(/^404/);

    const tx = await hearth.executeBatch({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          fullUrl: 'urn:uuid:7f3c0b1e-4c2a-4f59-9a1c-1b2c3d4e5f60',
          request: { method: 'POST', url: 'Patient' },
          resource: { resourceType: 'Patient', name: [{ family }] },
        },
        {
          request: { method: 'POST', url: 'Observation' },
          resource: {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'Weight' },
            subject: { reference: 'urn:uuid:7f3c0b1e-4c2a-4f59-9a1c-1b2c3d4e5f60' },
            valueQuantity: { value: 60, unit: 'kg' },
          },
        },
      ],
    });
    expect(tx.type).toBe('transaction-response');
    const observation = tx.entry?.[1].resource as Observation;
    const patientRef = `Patient/${tx.entry?.[0].resource?.id}`;
    expect(observation.subject?.reference).toBe(patientRef);
    const subject = await hearth.readReference(observation.subject ?? {});
    expect(subject.resourceType).toBe('Patient');
  });

  it('uploads a Binary while reporting progress, and downloads its bytes', async () => {
    const data = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
    const progress: number[] = [];
    const binary = await hearth.createBinary({
      contentType: 'application/octet-stream',
      data,
      filename: 'data.bin',
      onProgress: (e) => progress.push(e.loaded),
    });
    expect(binary.resourceType).toBe('Binary');
    expect(progress.at(-1)).toBe(300_000);
    expect(progress.length).toBeGreaterThan(2);
    const blob = await hearth.download(`Binary/${binary.id}`);
    expect(new Uint8Array(await blob.arrayBuffer())).toEqual(data);

    const attachment = await hearth.createAttachment({
      contentType: 'text/plain',
      data: 'hello, world',
      filename: 'a.txt',
    });
    expect(attachment.title).toBe('a.txt');
    expect(await (await hearth.download(attachment.url as string)).text()).toBe('hello, world');
  });

  it('shares concurrent reads and sees its own writes through the cache', async () => {
    const cached = new HearthClient({
      baseUrl: t.baseUrl,
      storage: new MemoryStorage(),
      cacheTime: 60_000,
      fetch: (input, init) => {
        if ((init?.method ?? 'GET') === 'GET') {
          gets++;
        }
        return fetch(input, init);
      },
    });
    let gets = 0;
    const token = hearth.getAccessToken();
    if (token) {
      cached.setAccessToken(token);
    }
    const p = await cached.createResource<Patient>({ resourceType: 'Patient', name: [{ family }] });
    const reads = await Promise.all([1, 2, 3].map(() => cached.readResource('Patient', p.id as string)));
    expect(reads.every((r) => r.id === p.id)).toBe(true);
    expect(gets).toBe(0); // the created resource was cached by the create itself
    cached.invalidateAll();
    await Promise.all([1, 2, 3].map(() => cached.readResource('Patient', p.id as string)));
    expect(gets).toBe(1);
    await cached.updateResource({ ...p, gender: 'other' });
    expect((await cached.readResource('Patient', p.id as string)).gender).toBe('other');
  });
});
