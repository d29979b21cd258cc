import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { applyOwnWrites, ChangeNotices } from './change-notices.js';
import { Repository } from './repository.js';

const FHIR = 'application/fhir+json';
const CONFIDENTIALITY = 'http://terminology.hl7.org/ValueSet/v3-ConfidentialityClassification';
const NICKNAME = 'http://example.org/fhir/StructureDefinition/nickname';

/** Polls `check` until it holds; fails after `timeoutMs` (generous: a loaded 2-core machine). */
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) {
      throw new Error(`not within ${timeoutMs} ms: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - start;
}

const composition = (confidentiality: string) => ({
  resourceType: 'Composition',
  status: 'final',
  type: { text: 'note' },
  date: '2024-01-01',
  author: [{ display: 'Dr. Who' }],
  title: 'A note',
  confidentiality,
});

/** Writes a Composition through a server: its status (201, or 400 for a code outside the binding). */
async function postCompositionTo(server: TestApp, confidentiality: string): Promise<number> {
  const res = await server.app.inject({
    method: 'POST',
    url: '/fhir/R4/Composition',
    headers: { ...server.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify(composition(confidentiality)),
  });
  return res.statusCode;
}

describe('ChangeNotices', () => {
  it('hands a notice to the caches derived from one of its types, and ignores other messages', () => {
    const notices = new ChangeNotices();
    const heard: string[] = [];
    notices.on(['ValueSet', 'CodeSystem'], (n) => heard.push(`terminology ${n.projectId}`));
    notices.on(['SearchParameter'], (n) => heard.push(`params ${n.projectId}`));
    const versions = [
      { resourceType: 'ValueSet', projectId: 'p1' },
      { resourceType: 'CodeSystem', projectId: 'p1' },
      { resourceType: 'Patient', projectId: 'p1' },
      { resourceType: 'SearchParameter', projectId: 'p2' },
    ] as Parameters<ChangeNotices['messagesFor']>[0];
    const messages = notices.messagesFor(versions);
    expect(messages).toEqual([
      { k: 'changed', p: 'p1', t: ['ValueSet', 'CodeSystem'] },
      { k: 'changed', p: 'p2', t: ['SearchParameter'] },
    ]);
    messages.forEach((m) => notices.receive(JSON.parse(JSON.stringify(m)) as Record<string, unknown>));
    notices.receive({ k: 'ws', p: 'p1', t: ['ValueSet'] });
    notices.receive({ k: 'changed', p: 'p3', t: ['Patient'] });
    expect(heard).toEqual(['terminology p1', 'params p2']);
    expect(notices.watches('Patient')).toBe(false);
  });

  it("gives the writing process its own writes' notices at once, before the write is answered", () => {
    const notices = new ChangeNotices();
    const heard: string[] = [];
    notices.on(['StructureDefinition'], (n) => heard.push(n.projectId));
    const listener = applyOwnWrites(notices);
    listener([
      { version: { resourceType: 'StructureDefinition', projectId: 'p1' } },
      { version: { resourceType: 'Patient', projectId: 'p1' } },
    ] as Parameters<typeof listener>[0]);
    // Synchronously: no wait for the message bus.
    expect(heard).toEqual(['p1']);
  });
});

// Two servers on one database (two processes of one deployment), each with its own caches. The
// caches' maximum age is set far beyond the test: only the change notices can make it pass.
describe.each([
  ['PostgreSQL LISTEN/NOTIFY', {}],
  ['Redis', { redisUrl: 'redis://127.0.0.1:6379' }],
])('caches of stored content, two servers on one database (%s bus)', (_bus, busConfig) => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const config = { cacheMaxAgeMs: 3_600_000, ...busConfig };
    a = await createTestApp({ config });
    b = await createTestApp({ config, db: a.db });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** Rewrites the global v3-ConfidentialityClassification value set through server A. */
  const setConfidentialityCodes = async (codes: string[]) => {
    const repo = a.services.systemRepo(a.services.terminology.projectId);
    const { resource: valueSet } = await repo.readResource<
      Resource & { compose: { include: { concept: object[] }[] } }
    >('ValueSet', 'v3-ConfidentialityClassification');
    expect((valueSet as { url?: string }).url).toBe(CONFIDENTIALITY);
    valueSet.compose.include[0].concept = codes.map((code) => ({ code }));
    await repo.updateResource(valueSet);
  };

  it('a required-binding value set changed through server A is enforced by server B', async () => {
    // B has expanded the value set: "R" (restricted) is in it.
    expect(await postCompositionTo(b, 'R')).toBe(201);
    await setConfidentialityCodes(['U', 'L', 'M', 'N', 'V']);
    const took = await waitFor(
      'server B refuses the removed code',
      async () => (await postCompositionTo(b, 'R')) === 400,
    );
    expect(await postCompositionTo(b, 'N')).toBe(201);
    // And back: the restored code is accepted again.
    await setConfidentialityCodes(['U', 'L', 'M', 'N', 'R', 'V']);
    await waitFor('server B accepts the restored code', async () => (await postCompositionTo(b, 'R')) === 201);
    console.log(`server B enforced the changed value set ${took} ms after server A's write`);
  });

  it('a SearchParameter created through server A is known to server B', async () => {
    const strictSearch = (server: TestApp, query: string) =>
      server.app.inject({
        url: `/fhir/R4/Patient?${query}`,
        headers: { ...a.authHeaders, prefer: 'handling=strict' },
      });
    // B has read the project's (no) parameters: nickname is unknown there.
    expect((await strictSearch(b, 'nickname=bobby')).statusCode).toBe(400);
    const created = await a.app.inject({
      method: 'POST',
      url: '/fhir/R4/SearchParameter',
      headers: { ...a.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({
        resourceType: 'SearchParameter',
        url: `http://example.org/fhir/SearchParameter/Patient-nickname-${Date.now()}`,
        name: 'nickname',
        status: 'active',
        description: 'A nickname',
        code: 'nickname',
        base: ['Patient'],
        type: 'string',
        expression: `Patient.extension('${NICKNAME}').value`,
      }),
    });
    expect(created.statusCode, created.body).toBe(201);
    await waitFor(
      'server B knows the parameter',
      async () => (await strictSearch(b, 'nickname=bobby')).statusCode === 200,
    );
    // B indexes its own writes with it.
    const patient = await b.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...a.authHeaders, 'content-type': FHIR },
      payload: JSON.stringify({ resourceType: 'Patient', extension: [{ url: NICKNAME, valueString: 'Bobby' }] }),
    });
    expect(patient.statusCode, patient.body).toBe(201);
    const found = await strictSearch(b, 'nickname=bobby');
    expect(found.json().entry?.map((e: { resource: { id: string } }) => e.resource.id)).toContain(patient.json().id);
  });
});

describe('caches of stored content when a notice is missed', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ config: { cacheMaxAgeMs: 1500 }, db: a.db });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('server B reads the required-binding value sets again within HEARTH_CACHE_MAX_AGE_MS', async () => {
    expect(await postCompositionTo(b, 'R')).toBe(201);
    // The write fills the terminology tables but sends no notice (as if B's bus connection were
    // reconnecting at that moment).
    const deps = a.services.repositoryDeps;
    const silent = new Repository(
      { ...deps, indexer: a.services.terminology.wrapIndexer(a.services.search.indexer) },
      { projectId: a.services.terminology.projectId, system: true },
    );
    const { resource } = await silent.readResource<Resource & { compose: { include: { concept: object[] }[] } }>(
      'ValueSet',
      'v3-ConfidentialityClassification',
    );
    resource.compose.include[0].concept = ['U', 'L', 'M', 'N', 'V'].map((code) => ({ code }));
    await silent.updateResource(resource);
    await waitFor('server B refuses the removed code', async () => (await postCompositionTo(b, 'R')) === 400);
  });
});

describe('signing keys, two servers on one database', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ db: a.db });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a key revoked through server A no longer verifies tokens on server B', async () => {
    const read = (server: TestApp) =>
      server.app.inject({ url: '/fhir/R4/Patient?_count=1', headers: a.authHeaders }).then((r) => r.statusCode);
    // B has verified the token (and keeps the verification while the token is unexpired).
    expect(await read(b)).toBe(200);
    const repo = a.services.systemRepo();
    const kid = a.services.auth.keys.publicKeys().keys[0].kid!;
    const { resource } = await repo.readResource('JsonWebKey', kid);
    await repo.updateResource({ ...resource, active: false } as Resource);
    await waitFor('server B refuses the token', async () => (await read(b)) === 401);
    expect(await read(a)).toBe(401);
  });
});
