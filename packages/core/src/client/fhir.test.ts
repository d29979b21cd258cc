import { describe, expect, it, vi } from 'vitest';
import type { Patient } from '@hearth/fhir-types';
import { isNotFound, OperationOutcomeError } from '../outcome.js';
import { HearthClient } from './client.js';
import { MemoryStorage } from './storage.js';
import { json, MockFetch, outcome } from './mock-fetch.test-util.js';

const BASE = 'http://hearth.test/';
const FHIR = '/fhir/R4';

function setup(cacheTime = 60_000) {
  const mock = new MockFetch();
  const client = new HearthClient({ baseUrl: BASE, fetch: mock.fetch, storage: new MemoryStorage(), cacheTime });
  return { mock, client };
}

const patient = (id: string, family = 'Smith'): Patient => ({
  resourceType: 'Patient',
  id,
  meta: { versionId: '1' },
  name: [{ family }],
});

function searchset(resources: Patient[], next?: string) {
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    entry: resources.map((resource) => ({ resource, search: { mode: 'match' } })),
    link: next ? [{ relation: 'next', url: next }] : [],
  };
}

describe('FHIR interactions', () => {
  it('creates with FHIR JSON, the default Accept header and no token when signed out', async () => {
    const { mock, client } = setup();
    mock.on('POST', `${FHIR}/Patient`, (req) => json({ ...JSON.parse(req.body), id: 'p1' }, 201));
    const created = await client.createResource<Patient>({ resourceType: 'Patient', gender: 'female' });
    expect(created).toMatchObject({ resourceType: 'Patient', id: 'p1', gender: 'female' });
    const [req] = mock.requests;
    expect(req.headers['content-type']).toBe('application/fhir+json');
    expect(req.headers.accept).toBe('application/fhir+json, */*; q=0.1');
    expect(req.headers.authorization).toBeUndefined();
  });

  it('sends If-None-Exist, If-Match, JSON Patch and conditional updates as the spec says', async () => {
    const { mock, client } = setup();
    mock.on('POST', `${FHIR}/Patient`, () => json(patient('p1')));
    mock.on('PUT', `${FHIR}/Patient/p1`, (req) => json(JSON.parse(req.body)));
    mock.on('PATCH', `${FHIR}/Patient/p1`, () => json(patient('p1', 'Jones')));
    mock.on('PUT', `${FHIR}/Patient`, (req) => json({ ...JSON.parse(req.body), id: 'p9' }, 201));
    await client.createResourceIfNoneExist({ resourceType: 'Patient' }, 'Patient?identifier=x|1');
    expect(mock.requests[0].headers['if-none-exist']).toBe('identifier=x|1');
    await client.updateResource(patient('p1'), { ifMatch: '1' });
    expect(mock.requests[1].headers['if-match']).toBe('W/"1"');
    const patched = await client.patchResource('Patient', 'p1', [
      { op: 'replace', path: '/name/0/family', value: 'Jones' },
    ]);
    expect(patched.name?.[0].family).toBe('Jones');
    expect(mock.requests[2].headers['content-type']).toBe('application/json-patch+json');
    expect(JSON.parse(mock.requests[2].body)).toEqual([{ op: 'replace', path: '/name/0/family', value: 'Jones' }]);
    const upserted = await client.upsertResource<Patient>({ resourceType: 'Patient' }, { identifier: 'x|2' });
    expect(upserted.id).toBe('p9');
    expect(mock.requests[3].url.search).toBe('?identifier=x%7C2');
  });

  it('reads by reference, history and version; rejects references it cannot read', async () => {
    const { mock, client } = setup();
    mock.on('GET', `${FHIR}/Patient/p1`, () => json(patient('p1')));
    mock.on('GET', `${FHIR}/Patient/p1/_history`, () => json({ resourceType: 'Bundle', type: 'history', entry: [] }));
    mock.on('GET', `${FHIR}/Patient/p1/_history/1`, () => json(patient('p1')));
    expect((await client.readReference<Patient>({ reference: 'Patient/p1' })).id).toBe('p1');
    expect((await client.readReference<Patient>({ reference: `${BASE}fhir/R4/Patient/p1` })).id).toBe('p1');
    expect((await client.readHistory('Patient', 'p1')).type).toBe('history');
    expect((await client.readVersion('Patient', 'p1', '1')).meta?.versionId).toBe('1');
    await expect(client.readReference({ reference: '#contained' })).rejects.toThrow(/contained/);
    await expect(client.readReference({ display: 'x' })).rejects.toBeInstanceOf(OperationOutcomeError);
    await expect(client.readResource('Patient', '')).rejects.toThrow(/id/);
  });

  it('searches as a Bundle, an array with its bundle, and one resource', async () => {
    const { mock, client } = setup(0);
    mock.on('GET', `${FHIR}/Patient`, (req) =>
      json(searchset(req.url.searchParams.get('_count') === '1' ? [patient('a')] : [patient('a'), patient('b')])),
    );
    const bundle = await client.search('Patient', { name: ['smith', 'john'], active: true });
    expect(bundle.entry).toHaveLength(2);
    expect(mock.requests[0].url.search).toBe('?name=smith&name=john&active=true');
    const array = await client.searchResources('Patient', 'name=smith');
    expect(array.map((p) => p.id)).toEqual(['a', 'b']);
    expect(array.bundle.type).toBe('searchset');
    const one = await client.searchOne('Patient', { name: 'smith' });
    expect(one?.id).toBe('a');
    expect(mock.requests[2].url.searchParams.get('_count')).toBe('1');
  });

  it('pages through a search by following next links', async () => {
    const { mock, client } = setup(0);
    mock.on('GET', /Patient\?name=x$/, () =>
      json(searchset([patient('1'), patient('2')], `${BASE}fhir/R4/Patient?name=x&_cursor=2`)),
    );
    mock.on('GET', /_cursor=2$/, () => json(searchset([patient('3')], `${BASE}fhir/R4/Patient?name=x&_cursor=3`)));
    mock.on('GET', /_cursor=3$/, () => json(searchset([])));
    const pages: string[][] = [];
    for await (const page of client.searchResourcePages('Patient', { name: 'x' })) {
      pages.push(page.map((p) => p.id as string));
    }
    expect(pages).toEqual([['1', '2'], ['3'], []]);
  });

  it('posts a batch to the base and rejects what is not a Bundle', async () => {
    const { mock, client } = setup();
    mock.on('POST', '/fhir/R4/', () => json({ resourceType: 'Bundle', type: 'batch-response', entry: [] }));
    const result = await client.executeBatch({ resourceType: 'Bundle', type: 'batch', entry: [] });
    expect(result.type).toBe('batch-response');
    await expect(client.executeBatch({ resourceType: 'Patient' } as never)).rejects.toThrow(/Bundle/);
  });
});

describe('cache', () => {
  it('shares one request between identical concurrent GETs, even with no cache time', async () => {
    const { mock, client } = setup(0);
    mock.on('GET', `${FHIR}/Patient/p1`, async () => {
      await new Promise((r) => setTimeout(r, 20));
      return json(patient('p1'));
    });
    const [a, b, c] = await Promise.all([
      client.readResource('Patient', 'p1'),
      client.readResource('Patient', 'p1'),
      client.get('fhir/R4/Patient/p1'),
    ]);
    expect(mock.requests).toHaveLength(1);
    expect(a).toBe(b);
    expect(c).toEqual(a);
    await client.readResource('Patient', 'p1');
    expect(mock.requests).toHaveLength(2);
  });

  it('keeps reads for cacheTime, and forgets them when the resource or its type is written', async () => {
    const { mock, client } = setup(60_000);
    let family = 'Smith';
    mock.on('GET', `${FHIR}/Patient/p1`, () => json(patient('p1', family)));
    mock.on('GET', `${FHIR}/Patient`, () => json(searchset([patient('p1', family)])));
    mock.on('GET', `${FHIR}/Observation`, () => json(searchset([])));
    mock.on('PUT', `${FHIR}/Patient/p1`, (req) => {
      family = JSON.parse(req.body).name[0].family;
      return json(JSON.parse(req.body));
    });
    mock.on('POST', `${FHIR}/Patient`, () => json(patient('p2'), 201));
    await client.readResource('Patient', 'p1');
    await client.readResource('Patient', 'p1');
    await client.search('Patient', { name: 'smith' });
    await client.search('Observation');
    expect(mock.to('GET', `${FHIR}/Patient/p1`)).toHaveLength(1);

    await client.updateResource(patient('p1', 'Jones'));
    // The written resource is the cached answer now: no request, and the new content.
    expect((await client.readResource('Patient', 'p1')).name?.[0].family).toBe('Jones');
    expect(mock.to('GET', `${FHIR}/Patient/p1`)).toHaveLength(1);
    // Searches of the type were forgotten; other types were not.
    await client.search('Patient', { name: 'smith' });
    await client.search('Observation');
    expect(mock.to('GET', `${FHIR}/Patient`)).toHaveLength(2);
    expect(mock.to('GET', `${FHIR}/Observation`)).toHaveLength(1);

    await client.createResource({ resourceType: 'Patient' });
    await client.search('Patient', { name: 'smith' });
    expect(mock.to('GET', `${FHIR}/Patient`)).toHaveLength(3);
  });

  it('forgets a deleted resource, reloads on request, and forgets everything after a batch', async () => {
    const { mock, client } = setup(60_000);
    mock.on('GET', `${FHIR}/Patient/p1`, () => json(patient('p1')));
    mock.on('DELETE', `${FHIR}/Patient/p1`, () => new Response(null, { status: 204 }));
    mock.on('POST', '/fhir/R4/', () => json({ resourceType: 'Bundle', type: 'batch-response' }));
    await client.readResource('Patient', 'p1');
    await client.readResource('Patient', 'p1', { cache: 'no-cache' });
    expect(mock.requests).toHaveLength(2);
    await client.deleteResource('Patient', 'p1');
    await client.readResource('Patient', 'p1');
    expect(mock.to('GET', `${FHIR}/Patient/p1`)).toHaveLength(3);
    await client.executeBatch({ resourceType: 'Bundle', type: 'batch' });
    await client.readResource('Patient', 'p1');
    expect(mock.to('GET', `${FHIR}/Patient/p1`)).toHaveLength(4);
  });

  it('expires entries after cacheTime and never keeps failures', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { mock, client } = setup(1000);
      let fail = true;
      mock.on('GET', `${FHIR}/Patient/p1`, () => (fail ? outcome('not-found', 404, 'gone') : json(patient('p1'))));
      await expect(client.readResource('Patient', 'p1')).rejects.toThrow();
      fail = false;
      await client.readResource('Patient', 'p1');
      await client.readResource('Patient', 'p1');
      expect(mock.requests).toHaveLength(2);
      vi.setSystemTime(Date.now() + 1500);
      await client.readResource('Patient', 'p1');
      expect(mock.requests).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the access token', () => {
  it('goes to this server only, never to another origin a URL names', async () => {
    const { mock, client } = setup(0);
    client.setAccessToken('secret-token');
    mock.on('GET', '/files/a.pdf', () => new Response('pdf', { status: 200 }));
    mock.on('GET', `${FHIR}/Binary/b1`, () => new Response('bytes', { status: 200 }));
    await client.download('https://elsewhere.example/files/a.pdf');
    await client.download('Binary/b1');
    await client.get('http://hearth.test:8080/files/a.pdf').catch(() => undefined);
    const sent = mock.requests.map((r) => [r.url.origin, r.headers.authorization]);
    expect(sent).toEqual([
      ['https://elsewhere.example', undefined],
      ['http://hearth.test', 'Bearer secret-token'],
      ['http://hearth.test:8080', undefined],
    ]);
  });

  it('a 401 from another origin does not end the session', async () => {
    const { mock, client } = setup(0);
    let told = 0;
    client.addEventListener('unauthenticated', () => told++);
    client.setAccessToken('secret-token');
    mock.on('GET', '/private', () => json({ error: 'nope' }, 401));
    const err = await client.get('https://elsewhere.example/private').catch((e: unknown) => e);
    expect((err as OperationOutcomeError).status).toBe(401);
    expect(told).toBe(0);
    expect(client.getAccessToken()).toBe('secret-token');
  });
});

describe('errors', () => {
  it('rejects with the server OperationOutcome', async () => {
    const { mock, client } = setup();
    mock.on('GET', `${FHIR}/Patient/missing`, () => outcome('not-found', 404, 'Patient/missing not found'));
    const err = await client.readResource('Patient', 'missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OperationOutcomeError);
    const e = err as OperationOutcomeError;
    expect(isNotFound(e.outcome)).toBe(true);
    expect(e.status).toBe(404);
    expect(e.message).toBe('Patient/missing not found');
  });

  it('names the status of an outcome without an id, and of bodies that are not outcomes', async () => {
    const { mock, client } = setup(0);
    mock.on('GET', '/a', () =>
      json({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'conflict' }] }, 409),
    );
    mock.on('GET', '/b', () => new Response('Bad gateway', { status: 502, headers: { 'content-type': 'text/plain' } }));
    mock.on('POST', '/c', () => json({ error: 'invalid_grant', error_description: 'Code expired' }, 400));
    const a = (await client.get('a').catch((e: unknown) => e)) as OperationOutcomeError;
    expect([a.outcome.id, a.status]).toEqual(['conflict', 409]);
    const b = (await client.get('b').catch((e: unknown) => e)) as OperationOutcomeError;
    expect([b.outcome.id, b.status, b.message]).toEqual(['server-error', 500, 'Bad gateway']);
    const c = (await client.post('c', {}).catch((e: unknown) => e)) as OperationOutcomeError;
    expect([c.status, c.message]).toEqual([400, 'Code expired']);
  });

  it('turns a failed connection into a service-unavailable outcome', async () => {
    const client = new HearthClient({
      baseUrl: BASE,
      storage: new MemoryStorage(),
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    });
    const err = (await client.get('x').catch((e: unknown) => e)) as OperationOutcomeError;
    expect(err).toBeInstanceOf(OperationOutcomeError);
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/fetch failed/);
  });

  it('retries a throttled GET after Retry-After, but not a POST', async () => {
    const { mock, client } = setup(0);
    let calls = 0;
    const throttled = () => json({ resourceType: 'OperationOutcome', issue: [] }, 429, { 'retry-after': '0' });
    mock.on('GET', '/limited', () => (++calls < 3 ? throttled() : json({ ok: true })));
    mock.on('POST', '/limited', throttled);
    expect(await client.get('limited')).toEqual({ ok: true });
    expect(calls).toBe(3);
    await expect(client.post('limited', {})).rejects.toMatchObject({ status: 429 });
  });
});

describe('operations, binaries and administration', () => {
  it('calls $graphql, $validate, $expand and $execute', async () => {
    const { mock, client } = setup(0);
    mock.on('POST', `${FHIR}/$graphql`, (req) => json({ data: { echo: JSON.parse(req.body) } }));
    mock.on('POST', `${FHIR}/Patient/$validate`, () => json({ resourceType: 'OperationOutcome', id: 'ok', issue: [] }));
    mock.on('GET', `${FHIR}/ValueSet/$expand`, (req) =>
      json({ resourceType: 'ValueSet', status: 'active', url: req.url.search }),
    );
    mock.on('POST', `${FHIR}/Bot/b1/$execute`, (req) => json({ got: JSON.parse(req.body) }));
    mock.on(
      'POST',
      `${FHIR}/Bot/$execute`,
      (req) => new Response(`hi ${req.url.searchParams.get('identifier')}: ${req.body}`),
    );

    const gql = await client.graphql('{ x }', 'Q', { a: 1 });
    expect(gql.data).toEqual({ echo: { query: '{ x }', operationName: 'Q', variables: { a: 1 } } });
    expect((await client.validateResource({ resourceType: 'Patient' })).id).toBe('ok');
    const vs = await client.valueSetExpand({ url: 'http://x/vs', filter: 'ab', count: 5 });
    expect(vs.url).toBe('?url=http%3A%2F%2Fx%2Fvs&filter=ab&count=5');
    expect(await client.executeBot('b1', { n: 1 })).toEqual({ got: { n: 1 } });
    expect(await client.executeBot({ system: 'sys', value: 'v' }, 'text in', 'text/plain')).toBe('hi sys|v: text in');
  });

  it('evaluates a measure: GET with the parameters, or POST Parameters when the report is to be stored', async () => {
    const { mock, client } = setup(0);
    mock.on('GET', `${FHIR}/Measure/cms122/$evaluate-measure`, (req) =>
      json({ resourceType: 'MeasureReport', status: 'complete', type: 'summary', measure: req.url.search }),
    );
    mock.on('GET', `${FHIR}/Measure/$evaluate-measure`, (req) =>
      json({ resourceType: 'MeasureReport', status: 'complete', type: 'individual', measure: req.url.search }),
    );
    mock.on('POST', `${FHIR}/Measure/cms122/$evaluate-measure`, (req) =>
      json({ resourceType: 'MeasureReport', id: 'r1', status: 'complete', type: 'summary', measure: req.body }, 201),
    );
    const summary = await client.evaluateMeasure('cms122', { periodStart: '2019-01-01', periodEnd: '2019-12-31' });
    expect(summary.measure).toBe('?periodStart=2019-01-01&periodEnd=2019-12-31');
    const one = await client.evaluateMeasure(
      { canonical: 'http://example.org/Measure/m|1' },
      { periodStart: '2019', periodEnd: '2019', subject: 'Patient/p1', reportType: 'individual' },
    );
    expect(new URLSearchParams(one.measure).get('measure')).toBe('http://example.org/Measure/m|1');
    expect(new URLSearchParams(one.measure).get('subject')).toBe('Patient/p1');
    const stored = await client.evaluateMeasure('cms122', {
      periodStart: '2019-01-01',
      periodEnd: '2019-12-31',
      persist: true,
    });
    expect(stored.id).toBe('r1');
    expect(JSON.parse(stored.measure)).toEqual({
      resourceType: 'Parameters',
      parameter: [
        { name: 'periodStart', valueString: '2019-01-01' },
        { name: 'periodEnd', valueString: '2019-12-31' },
        { name: 'persist', valueBoolean: true },
      ],
    });
  });

  it('uploads a Binary with its content type and security context, reporting progress', async () => {
    const { mock, client } = setup(0);
    mock.on('POST', `${FHIR}/Binary`, (req) =>
      json(
        { resourceType: 'Binary', id: 'bin1', contentType: req.headers['content-type'], size: req.bytes.byteLength },
        201,
      ),
    );
    const data = new Uint8Array(200_000).map((_, i) => i % 251);
    const progress: number[] = [];
    const binary = await client.createBinary({
      contentType: 'application/octet-stream',
      data,
      filename: 'data file.bin',
      securityContext: { reference: 'Patient/p1' },
      onProgress: (e) => progress.push(e.loaded),
    });
    expect(binary).toMatchObject({ id: 'bin1', contentType: 'application/octet-stream', size: 200_000 });
    const req = mock.requests[0];
    expect(req.headers['x-security-context']).toBe('Patient/p1');
    expect(req.headers['content-disposition']).toBe("attachment; filename*=UTF-8''data%20file.bin");
    expect([...req.bytes]).toEqual([...data]);
    // Reported from the streamed body, 64 KiB at a time, each position once.
    expect(progress).toEqual([65_536, 131_072, 196_608, 200_000]);

    const attachment = await client.createAttachment({ contentType: 'text/plain', data: 'hello', filename: 'a.txt' });
    expect(attachment).toEqual({ contentType: 'text/plain', url: 'Binary/bin1', title: 'a.txt' });
    expect(mock.requests[1].body).toBe('hello');
  });

  it('downloads content as a Blob, reading FHIR references under the FHIR base', async () => {
    const { mock, client } = setup(0);
    mock.on(
      'GET',
      `${FHIR}/Binary/bin1`,
      (req) => new Response(`raw ${req.headers.accept}`, { headers: { 'content-type': 'text/plain' } }),
    );
    const blob = await client.download('Binary/bin1');
    expect(await blob.text()).toBe('raw */*');
  });

  it('calls the project administration endpoints', async () => {
    const { mock, client } = setup(0);
    mock.on('POST', '/admin/projects/pr1/invite', (req) =>
      json({ resourceType: 'ProjectMembership', id: 'm1', body: JSON.parse(req.body) }),
    );
    mock.on('POST', '/admin/projects/pr1/client', () =>
      json({ resourceType: 'ClientApplication', id: 'c1', secret: 's' }, 201),
    );
    mock.on('POST', '/admin/projects/pr1/bot', () => json({ resourceType: 'Bot', id: 'b1' }, 201));
    mock.on('GET', '/admin/projects/pr1', () => json({ project: { id: 'pr1' } }));
    const membership = await client.invite('pr1', {
      resourceType: 'Practitioner',
      firstName: 'A',
      lastName: 'B',
      email: 'a@b.c',
    });
    expect(membership.id).toBe('m1');
    expect(mock.requests[0].headers['content-type']).toBe('application/json');
    expect((await client.createClient('pr1', { name: 'app' })).id).toBe('c1');
    expect((await client.createBot('pr1', { name: 'bot' })).id).toBe('b1');
    expect(await client.getProjectAdmin('pr1')).toEqual({ project: { id: 'pr1' } });
  });

  it('reads, updates and removes a project member at its own path', async () => {
    const { mock, client } = setup(0);
    const member = { resourceType: 'ProjectMembership', id: 'm 1', admin: false };
    mock.on('GET', '/admin/projects/pr1/members/m%201', () => json(member));
    mock.on('POST', '/admin/projects/pr1/members/m%201', (req) => json({ ...member, ...JSON.parse(req.body) }));
    mock.on('DELETE', '/admin/projects/pr1/members/m%201', () =>
      json({ resourceType: 'OperationOutcome', issue: [{ severity: 'information', code: 'informational' }] }),
    );
    expect((await client.getProjectMember('pr1', 'm 1')).id).toBe('m 1');
    const updated = await client.updateProjectMember('pr1', { id: 'm 1', admin: true, accessPolicy: null });
    expect(updated.admin).toBe(true);
    expect(JSON.parse(mock.requests[1].body)).toEqual({ id: 'm 1', admin: true, accessPolicy: null });
    expect(mock.requests[1].headers['content-type']).toBe('application/json');
    expect((await client.removeProjectMember('pr1', 'm 1')).resourceType).toBe('OperationOutcome');
    expect(mock.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'DELETE']);
    await expect(client.updateProjectMember('pr1', { id: '' })).rejects.toThrow('The membership has no id');
  });
});
