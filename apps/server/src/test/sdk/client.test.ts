/**
 * The SDK's HearthClient against a real Hearth server (listening on a port, on its own database):
 * CRUD, history, versions, conditional create, patch, search and paging, batch and transaction,
 * binaries, caching, errors, the get/post/put/patch/delete escape hatches. The client signs in as
 * the super admin first; sign-in.test.ts covers the sign-in flows themselves.
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
import type { TestApp } from '../app.js';
import { serverWithSignedInAdmin } from './server.test-util.js';

let t: TestApp;
let hearth: HearthClient;
const family = `Sdk${Date.now()}`;

beforeAll(async () => {
  ({ t, hearth } = await serverWithSignedInAdmin());
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
    cached.setAccessToken(hearth.getAccessToken() as string);
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

  it('keeps searches until a write of their type, and reads until the resource is written', async () => {
    let gets = 0;
    const cached = new HearthClient({
      baseUrl: t.baseUrl,
      storage: new MemoryStorage(),
      cacheTime: 60_000,
      fetch: (input, init) => {
        gets += (init?.method ?? 'GET') === 'GET' ? 1 : 0;
        return fetch(input, init);
      },
    });
    cached.setAccessToken(hearth.getAccessToken() as string);
    const tag = `cache-${Date.now()}`;
    const query = { identifier: `https://sdk.test/cache|${tag}` };
    expect(await cached.searchResources('Patient', query)).toHaveLength(0);
    expect(await cached.searchResources('Patient', query)).toHaveLength(0);
    expect(gets).toBe(1);
    // Another client's write is not seen until the cache time ends or the cache is bypassed...
    const other = await hearth.createResource<Patient>({
      resourceType: 'Patient',
      identifier: [{ system: 'https://sdk.test/cache', value: tag }],
    });
    expect(await cached.searchResources('Patient', query)).toHaveLength(0);
    expect(await cached.searchResources('Patient', query, { cache: 'no-cache' })).toHaveLength(1);
    // ...but this client's own write of the type forgets the searches of the type.
    await cached.createResource<Patient>({
      resourceType: 'Patient',
      identifier: [{ system: 'https://sdk.test/cache', value: tag }],
    });
    expect(await cached.searchResources('Patient', query)).toHaveLength(2);
    const before = gets;
    await cached.readResource('Patient', other.id as string);
    await cached.readResource('Patient', other.id as string);
    expect(gets).toBe(before + 1);
    await cached.patchResource('Patient', other.id as string, [{ op: 'add', path: '/active', value: false }]);
    expect((await cached.readResource('Patient', other.id as string)).active).toBe(false);
    await cached.deleteResource('Patient', other.id as string);
    const gone = await cached.readResource('Patient', other.id as string).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OperationOutcomeError);
  });
});

describe('HearthClient against a server: escape hatches and conditional update', () => {
  it('calls any path with get, post, put, patch and delete', async () => {
    const created = await hearth.post<Patient>('fhir/R4/Patient', { resourceType: 'Patient', name: [{ family }] });
    expect(created.id).toBeTruthy();
    const url = hearth.fhirUrl('Patient', created.id as string);
    expect((await hearth.get<Patient>(url)).name?.[0].family).toBe(family);
    const put = await hearth.put<Patient>(url, { ...created, gender: 'female' });
    expect(put.gender).toBe('female');
    const patched = await hearth.patch<Patient>(url, [{ op: 'replace', path: '/gender', value: 'male' }]);
    expect(patched.gender).toBe('male');
    await hearth.delete(url);
    expect(await hearth.get(url).catch((e: unknown) => (e as OperationOutcomeError).status)).toBe(410);
    // Platform paths resolve against the base URL.
    const me = await hearth.get<{ profile: { resourceType: string } }>('auth/me');
    expect(me.profile.resourceType).toBe('Practitioner');
  });

  it('creates or updates the one match of a conditional update (upsertResource)', async () => {
    const value = `upsert-${Date.now()}`;
    const query = { identifier: `https://sdk.test/upsert|${value}` };
    const identifier = [{ system: 'https://sdk.test/upsert', value }];
    const first = await hearth.upsertResource({ resourceType: 'Patient', identifier, gender: 'female' }, query);
    const second = await hearth.upsertResource({ resourceType: 'Patient', identifier, gender: 'male' }, query);
    expect(second.id).toBe(first.id);
    expect(second.gender).toBe('male');
    expect(second.meta?.versionId).not.toBe(first.meta?.versionId);
  });
});
