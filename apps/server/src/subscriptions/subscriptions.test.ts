import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createBot, deploy, FHIR_JSON, post, waitFor } from '../bots/testing.js';
import { signBody } from './deliver.js';
import { startReceiver, type Receiver } from './testing.js';

let t: TestApp;
let receiver: Receiver;

const EXT = 'https://medplum.com/fhir/StructureDefinition/';

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp({
    listen: true,
    config: { outboundAllowList: ['127.0.0.1'], jobRetryDelaySeconds: 1, jobPollingIntervalMs: 500 },
  });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function create<T extends Resource>(resource: T): Promise<T & { id: string }> {
  const res = await post(t, `fhir/R4/${resource.resourceType}`, resource, FHIR_JSON);
  if (res.status !== 201) {
    throw new Error(`create failed: ${res.status} ${res.text}`);
  }
  return res.json() as T & { id: string };
}

async function update<T extends Resource>(resource: T): Promise<T> {
  const res = await fetch(new URL(`fhir/R4/${resource.resourceType}/${resource.id}`, t.baseUrl), {
    method: 'PUT',
    headers: { 'content-type': FHIR_JSON, ...t.authHeaders },
    body: JSON.stringify(resource),
  });
  return (await res.json()) as T;
}

function subscription(criteria: string, endpoint: string, extra: Record<string, unknown> = {}): Resource {
  return {
    resourceType: 'Subscription',
    status: 'active',
    reason: 'test',
    criteria,
    channel: { type: 'rest-hook', endpoint, payload: 'application/fhir+json' },
    ...extra,
  };
}

/** Requests that arrived for a resource id (the body names it, or the deleted-resource header does). */
function arrivals(id: string, path = '/'): { body: string; headers: Record<string, unknown> }[] {
  return receiver.requests
    .filter(
      (r) =>
        r.url === path && (r.body.includes(id) || String(r.headers['x-medplum-deleted-resource'] ?? '').includes(id)),
    )
    .map((r) => ({ body: r.body, headers: r.headers as Record<string, unknown> }));
}

async function auditEvents(subscriptionId: string): Promise<(Resource & { outcome?: string; outcomeDesc?: string })[]> {
  const rows = await t.pool.query<{ content: string }>(
    `SELECT content FROM "AuditEvent" WHERE NOT deleted AND content LIKE $1 ORDER BY last_updated`,
    [`%Subscription/${subscriptionId}%`],
  );
  return rows.rows.map((r) => JSON.parse(r.content) as Resource & { outcome?: string; outcomeDesc?: string });
}

describe('rest-hook subscriptions', () => {
  it('POSTs a matching resource with custom headers and an HMAC-SHA256 signature; ignores others', async () => {
    const sub = await create(
      subscription('Patient?name=Watched', `${receiver.url}hook`, {
        channel: {
          type: 'rest-hook',
          endpoint: `${receiver.url}hook`,
          payload: 'application/fhir+json',
          header: ['Authorization: Bearer abc123', 'X-Custom: yes'],
        },
        extension: [{ url: `${EXT}subscription-secret`, valueString: 's3cret' }],
      }),
    );
    const other = await create({ resourceType: 'Patient', name: [{ family: 'Unwatched' }] });
    const watched = await create({ resourceType: 'Patient', name: [{ family: 'Watched' }] });
    const [hit] = await waitFor(() =>
      arrivals(watched.id, '/hook').length ? arrivals(watched.id, '/hook') : undefined,
    );
    const body = hit.body;
    expect(JSON.parse(body)).toMatchObject({ resourceType: 'Patient', id: watched.id });
    expect(hit.headers['content-type']).toBe('application/fhir+json');
    expect(hit.headers.authorization).toBe('Bearer abc123');
    expect(hit.headers['x-custom']).toBe('yes');
    expect(hit.headers['x-signature']).toBe(signBody('s3cret', body));
    await new Promise((r) => setTimeout(r, 500));
    expect(arrivals(other.id, '/hook')).toHaveLength(0);
    const audits = await waitFor(async () => {
      const list = await auditEvents(sub.id);
      return list.length > 0 ? list : undefined;
    });
    expect(audits[0].outcome).toBe('0');
    expect(audits[0].outcomeDesc).toContain('answered 200');
  });

  it('retries with backoff after the receiver fails twice, and records every attempt', async () => {
    const sub = await create(subscription('Observation?code=retry-me', `${receiver.url}retry`));
    receiver.failNext(2);
    const obs = await create({
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ code: 'retry-me' }] },
    });
    await waitFor(() => (arrivals(obs.id, '/retry').length >= 3 ? true : undefined), 20000);
    const times = receiver.requests.filter((r) => r.url === '/retry').map((r) => r.at);
    expect(times).toHaveLength(3);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(900);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(1900);
    const audits = await waitFor(async () => {
      const list = await auditEvents(sub.id);
      return list.length >= 3 ? list : undefined;
    });
    expect(audits.map((a) => a.outcome)).toEqual(['4', '4', '0']);
    expect(audits[0].outcomeDesc).toContain('answered 500');
    expect(audits[0].outcomeDesc).toContain('attempt 1 of 5');
    // The record is searchable by the subscription (docs/subscriptions.md).
    const search = await fetch(new URL(`fhir/R4/AuditEvent?entity=Subscription/${sub.id}`, t.baseUrl), {
      headers: t.authHeaders,
    });
    expect(search.status).toBe(200);
    // An admin's search reads the access trail: the Subscription's own create is there too.
    const found = ((await search.json()) as { entry?: { resource: { type: { code: string } } }[] }).entry ?? [];
    expect(found.filter((e) => e.resource.type.code !== 'rest')).toHaveLength(3);
    expect(found.filter((e) => e.resource.type.code === 'rest')).toHaveLength(1);
    // One notification: the first attempt (in the evaluation job) and the retries (a delivery job)
    // carry one id, by which a receiver can drop duplicates.
    const ids = new Set(
      receiver.requests.filter((r) => r.url === '/retry').map((r) => r.headers['x-hearth-delivery-id']),
    );
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('evaluates the writes of one transaction together: each match delivered once, the others not', async () => {
    await create(subscription('Observation?code=batched', `${receiver.url}batch`));
    const codes = ['batched', 'other', 'batched', 'batched', 'other'];
    const res = await post(
      t,
      'fhir/R4',
      {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: codes.map((code) => ({
          resource: { resourceType: 'Observation', status: 'final', code: { coding: [{ code }] } },
          request: { method: 'POST', url: 'Observation' },
        })),
      },
      FHIR_JSON,
    );
    expect(res.status).toBe(200);
    const ids = (res.json() as { entry: { response: { location: string } }[] }).entry.map(
      (e) => e.response.location.split('/')[1],
    );
    const matching = ids.filter((_id, i) => codes[i] === 'batched');
    await waitFor(() => (matching.every((id) => arrivals(id, '/batch').length === 1) ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    expect(ids.map((id) => arrivals(id, '/batch').length)).toEqual(codes.map((c) => (c === 'batched' ? 1 : 0)));
  });

  it('sends an empty body when the subscription asks for no payload', async () => {
    await create({
      resourceType: 'Subscription',
      status: 'active',
      reason: 'ping only',
      criteria: 'Device',
      channel: { type: 'rest-hook', endpoint: `${receiver.url}empty` },
    });
    const before = receiver.requests.filter((r) => r.url === '/empty').length;
    await create({ resourceType: 'Device' });
    await waitFor(() => (receiver.requests.filter((r) => r.url === '/empty').length > before ? true : undefined));
    const last = receiver.requests.filter((r) => r.url === '/empty').at(-1);
    expect(last?.body).toBe('');
  });

  it('sends no body for id-only and empty payload content, naming the version for id-only', async () => {
    const backport = 'http://hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/backport-payload-content';
    for (const [code, path] of [
      ['id-only', 'id-only'],
      ['empty', 'empty-content'],
    ]) {
      await create({
        resourceType: 'Subscription',
        status: 'active',
        reason: code,
        criteria: 'Endpoint?name=payload-content',
        channel: {
          type: 'rest-hook',
          endpoint: `${receiver.url}${path}`,
          payload: 'application/fhir+json',
          _payload: { extension: [{ url: backport, valueCode: code }] },
          header: ['X-Case: ' + code],
        },
        extension: [{ url: `${EXT}subscription-secret`, valueString: 'k' }],
      } as Resource);
    }
    const endpoint = await create({
      resourceType: 'Endpoint',
      status: 'active',
      name: 'payload-content',
      connectionType: { code: 'hl7-fhir-rest' },
      payloadType: [{ text: 'any' }],
      address: 'https://example.org/fhir',
    });
    const at = (path: string) => receiver.requests.filter((r) => r.url === path && r.headers['x-case']);
    await waitFor(() => (at('/id-only').length === 1 && at('/empty-content').length === 1 ? true : undefined));
    const [idOnly] = at('/id-only');
    expect(idOnly.body).toBe('');
    expect(idOnly.headers['content-type']).toBeUndefined();
    expect(idOnly.headers['content-location']).toBe(`${t.baseUrl}fhir/R4/Endpoint/${endpoint.id}/_history/1`);
    expect(idOnly.headers['x-signature']).toBe(signBody('k', ''));
    const [empty] = at('/empty-content');
    expect(empty.body).toBe('');
    expect(empty.headers['content-location']).toBeUndefined();
  });

  it('honours the interaction filter extension (update only) and the FHIRPath filter', async () => {
    await create(
      subscription('Practitioner', `${receiver.url}updates`, {
        extension: [{ url: `${EXT}subscription-supported-interaction`, valueCode: 'update' }],
      }),
    );
    await create(
      subscription('Practitioner', `${receiver.url}fhirpath`, {
        extension: [
          {
            url: `${EXT}fhir-path-criteria-expression`,
            valueString: '%previous.active = true and %current.active = false',
          },
        ],
      }),
    );
    const pr = await create({ resourceType: 'Practitioner', active: true });
    await update({ ...pr, gender: 'female' });
    await waitFor(() => (arrivals(pr.id, '/updates').length === 1 ? true : undefined));
    expect(arrivals(pr.id, '/fhirpath')).toHaveLength(0);
    await update({ ...pr, active: false });
    await waitFor(() => (arrivals(pr.id, '/fhirpath').length === 1 ? true : undefined));
    await waitFor(() => (arrivals(pr.id, '/updates').length === 2 ? true : undefined));
    // Creation fired neither.
    expect(JSON.parse(arrivals(pr.id, '/updates')[0].body).meta.versionId).toBe('2');
  });

  it('notifies deletions to subscriptions that ask for them', async () => {
    await create(
      subscription('Organization', `${receiver.url}deletes`, {
        extension: [{ url: `${EXT}subscription-supported-interaction`, valueCode: 'delete' }],
      }),
    );
    const org = await create({ resourceType: 'Organization', name: 'Doomed' });
    const res = await fetch(new URL(`fhir/R4/Organization/${org.id}`, t.baseUrl), {
      method: 'DELETE',
      headers: t.authHeaders,
    });
    expect(res.status).toBeLessThan(300);
    const [hit] = await waitFor(() => (arrivals(org.id, '/deletes').length ? arrivals(org.id, '/deletes') : undefined));
    expect(hit.headers['x-medplum-deleted-resource']).toBe(`Organization/${org.id}`);
    expect(JSON.parse(hit.body)).toMatchObject({ resourceType: 'Organization', name: 'Doomed' });
  });

  it('matches the criteria of a deletion against the deleted resource, which stays deleted', async () => {
    await create(
      subscription('HealthcareService?name=Closing', `${receiver.url}deleted-by-criteria`, {
        extension: [{ url: `${EXT}subscription-supported-interaction`, valueCode: 'delete' }],
      }),
    );
    const closing = await create({ resourceType: 'HealthcareService', name: 'Closing' });
    const staying = await create({ resourceType: 'HealthcareService', name: 'Staying' });
    for (const id of [staying.id, closing.id]) {
      const res = await fetch(new URL(`fhir/R4/HealthcareService/${id}`, t.baseUrl), {
        method: 'DELETE',
        headers: t.authHeaders,
      });
      expect(res.status).toBeLessThan(300);
    }
    const [hit] = await waitFor(() =>
      arrivals(closing.id, '/deleted-by-criteria').length ? arrivals(closing.id, '/deleted-by-criteria') : undefined,
    );
    expect(hit.headers['x-medplum-deleted-resource']).toBe(`HealthcareService/${closing.id}`);
    expect(JSON.parse(hit.body)).toMatchObject({ resourceType: 'HealthcareService', name: 'Closing' });
    await new Promise((r) => setTimeout(r, 500));
    expect(arrivals(staying.id, '/deleted-by-criteria')).toHaveLength(0);
    // The evaluation left no trace: the resource is still gone, from reads and from searches.
    const read = await fetch(new URL(`fhir/R4/HealthcareService/${closing.id}`, t.baseUrl), {
      headers: t.authHeaders,
    });
    expect(read.status).toBe(410);
    const search = await fetch(new URL('fhir/R4/HealthcareService?name=Closing', t.baseUrl), {
      headers: t.authHeaders,
    });
    expect(((await search.json()) as { entry?: unknown[] }).entry ?? []).toHaveLength(0);
  });

  it('$resend sends a resource again to its matching subscriptions', async () => {
    const sub = await create(subscription('Location?name=Resent', `${receiver.url}resend`));
    const loc = await create({ resourceType: 'Location', name: 'Resent' });
    await waitFor(() => (arrivals(loc.id, '/resend').length === 1 ? true : undefined));
    const res = await post(
      t,
      `fhir/R4/Location/${loc.id}/$resend`,
      {
        resourceType: 'Parameters',
        parameter: [{ name: 'subscription', valueString: `Subscription/${sub.id}` }],
      },
      FHIR_JSON,
    );
    expect(res.status).toBe(200);
    const [first, again] = await waitFor(() => {
      const list = arrivals(loc.id, '/resend');
      return list.length === 2 ? list : undefined;
    });
    // A resend is a new notification, not a duplicate of the first.
    expect(again.headers['x-hearth-delivery-id']).toBeTruthy();
    expect(again.headers['x-hearth-delivery-id']).not.toBe(first.headers['x-hearth-delivery-id']);
  });

  it('does not follow a redirect to an internal address (SSRF): the attempt fails, blocked, and is recorded', async () => {
    // The endpoint is allow-listed (127.0.0.1); where it redirects to is checked again, after DNS.
    receiver.redirect('/bounce-metadata', 'http://169.254.169.254/latest/meta-data/');
    receiver.redirect('/bounce-loopback', `http://127.0.0.2:${receiver.port}/stolen`);
    const ids: string[] = [];
    for (const path of ['/bounce-metadata', '/bounce-loopback']) {
      const sub = await create(
        subscription('Substance?code=bounce', `${receiver.url}${path.slice(1)}`, {
          extension: [{ url: `${EXT}subscription-max-attempts`, valueInteger: 1 }],
        }),
      );
      ids.push(sub.id);
    }
    const substance = await create({ resourceType: 'Substance', code: { coding: [{ code: 'bounce' }] } });
    for (const id of ids) {
      const [audit] = await waitFor(async () => {
        const list = await auditEvents(id);
        return list.length > 0 ? list : undefined;
      });
      expect(audit.outcome).toBe('4');
      expect(audit.outcomeDesc).toContain('blocked');
    }
    expect(arrivals(substance.id, '/bounce-metadata')).toHaveLength(1);
    expect(arrivals(substance.id, '/bounce-loopback')).toHaveLength(1);
    expect(receiver.requests.filter((r) => r.url === '/stolen')).toHaveLength(0);
  });

  it('ignores subscriptions that are not active', async () => {
    await create({ ...subscription('Group', `${receiver.url}off`), status: 'off' });
    const g = await create({ resourceType: 'Group', type: 'person', actual: true });
    await new Promise((r) => setTimeout(r, 1000));
    expect(arrivals(g.id, '/off')).toHaveLength(0);
  });
});

describe('writing a Subscription', () => {
  it('answers 400 naming the element for a subscription that could never fire as meant', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ criteria: 'not a search' }, 'Subscription.criteria'],
      [{ criteria: 'Patientt?name=x' }, 'Subscription.criteria'],
      [{ channel: { type: 'rest-hook', endpoint: 'ftp://example.org/x' } }, 'Subscription.channel.endpoint'],
      [{ channel: { type: 'email', endpoint: 'not-an-address' } }, 'Subscription.channel.endpoint'],
      [{ channel: { type: 'sms', endpoint: '+15555550100' } }, 'Subscription.channel.type'],
      [
        { extension: [{ url: `${EXT}subscription-supported-interaction`, valueCode: 'read' }] },
        'Subscription.extension[0]',
      ],
      [
        { extension: [{ url: `${EXT}fhir-path-criteria-expression`, valueString: '%current.active = = true' }] },
        'Subscription.extension[0]',
      ],
      [{ extension: [{ url: `${EXT}subscription-max-attempts`, valueInteger: 0 }] }, 'Subscription.extension[0]'],
    ];
    for (const [change, expression] of cases) {
      const res = await post(
        t,
        'fhir/R4/Subscription',
        { ...subscription('Patient?name=x', `${receiver.url}never`), ...change },
        FHIR_JSON,
      );
      expect(res.status, JSON.stringify(change)).toBe(400);
      const outcome = res.json() as { resourceType: string; issue: { expression?: string[] }[] };
      expect(outcome.resourceType).toBe('OperationOutcome');
      expect(
        outcome.issue.flatMap((i) => i.expression ?? []),
        JSON.stringify(change),
      ).toContain(expression);
    }
    // Switched off, it is stored as it is; a well-formed one is accepted.
    const off = await post(
      t,
      'fhir/R4/Subscription',
      { ...subscription('not a search', `${receiver.url}never`), status: 'off' },
      FHIR_JSON,
    );
    expect(off.status).toBe(201);
    const good = await post(
      t,
      'fhir/R4/Subscription',
      subscription('Patient?name=x', `${receiver.url}never`, {
        extension: [{ url: `${EXT}fhir-path-criteria-expression`, valueString: '%current.active = true' }],
      }),
      FHIR_JSON,
    );
    expect(good.status).toBe(201);
  });
});

describe("deliveries respect the author's access", () => {
  it('never carries a resource the subscription author cannot read', async () => {
    // The author: a bot whose policy lets it manage subscriptions and read patients, nothing else.
    const policy = await create({
      resourceType: 'AccessPolicy',
      name: 'subscriptions and patients',
      resource: [{ resourceType: 'Subscription' }, { resourceType: 'Patient', readonly: true }],
    });
    const author = await createBot(t, {}, `AccessPolicy/${policy.id}`);
    await deploy(
      t,
      author.id,
      `export async function handler(client, event) {
        const ids = [];
        for (const criteria of event.input.criteria) {
          const sub = await client.createResource({
            resourceType: 'Subscription', status: 'active', reason: 'author test', criteria,
            channel: { type: 'rest-hook', endpoint: event.input.endpoint, payload: 'application/fhir+json' },
          });
          ids.push(sub.id);
        }
        return ids;
      }`,
      'subscriber.js',
    );
    const res = await post(t, `fhir/R4/Bot/${author.id}/$execute`, {
      criteria: ['Patient?name=Restricted', 'Observation?code=restricted'],
      endpoint: `${receiver.url}author`,
    });
    expect(res.status).toBe(200);
    const [patientSub] = res.json() as string[];
    const stored = (await t.services.systemRepo(t.testProject.projectId).readResource('Subscription', patientSub))
      .resource;
    expect(stored.meta?.author?.reference).toBe(`Bot/${author.id}`);

    const obs = await create({
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ code: 'restricted' }] },
    });
    const patient = await create({ resourceType: 'Patient', name: [{ family: 'Restricted' }] });
    await waitFor(() => (arrivals(patient.id, '/author').length === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    expect(arrivals(obs.id, '/author')).toHaveLength(0);
    expect(receiver.requests.filter((r) => r.url === '/author')).toHaveLength(1);
  });
});

describe('deliveries hide what the author may not see', () => {
  it("leaves out fields the author's access policy hides", async () => {
    const policy = await create({
      resourceType: 'AccessPolicy',
      name: 'patients without birth dates',
      resource: [{ resourceType: 'Subscription' }, { resourceType: 'Patient', hiddenFields: ['birthDate'] }],
    });
    const author = await createBot(t, {}, `AccessPolicy/${policy.id}`);
    const asAuthor = await t.services.automation.members.forProfile(t.testProject.projectId, `Bot/${author.id}`);
    await asAuthor.createResource({
      ...subscription('Patient?name=Hidden', `${receiver.url}hidden`),
    });
    const patient = await create({
      resourceType: 'Patient',
      name: [{ family: 'Hidden' }],
      birthDate: '1970-01-01',
      gender: 'other',
    });
    const [hit] = await waitFor(() =>
      arrivals(patient.id, '/hidden').length ? arrivals(patient.id, '/hidden') : undefined,
    );
    const body = JSON.parse(hit.body) as Record<string, unknown>;
    expect(body).toMatchObject({ resourceType: 'Patient', id: patient.id, gender: 'other' });
    expect(body.birthDate).toBeUndefined();
  });
});

describe('a bot as the subscription endpoint', () => {
  it('runs the bot (as a job) with the resource as input', async () => {
    const bot = await createBot(t);
    await deploy(
      t,
      bot.id,
      `export async function handler(client, event) {
        const patient = event.input;
        console.log('flagging', patient.id);
        await client.createResource({
          resourceType: 'Flag',
          status: 'active',
          code: { text: 'seen by bot' },
          subject: { reference: 'Patient/' + patient.id },
        });
        return { ok: true };
      }`,
      'flagger.js',
    );
    const sub = await create(subscription('Patient?name=Flagme', `Bot/${bot.id}`));
    const patient = await create({ resourceType: 'Patient', name: [{ family: 'Flagme' }] });
    const flag = await waitFor(async () => {
      const rows = await t.pool.query<{ content: string }>(
        `SELECT content FROM "Flag" WHERE NOT deleted AND content LIKE $1`,
        [`%Patient/${patient.id}%`],
      );
      return rows.rows[0] ? (JSON.parse(rows.rows[0].content) as Resource) : undefined;
    });
    expect(flag.meta?.author?.reference).toBe(`Bot/${bot.id}`);
    const audits = await waitFor(async () => {
      const list = await auditEvents(sub.id);
      return list.length > 0 ? list : undefined;
    });
    expect(audits[0].outcomeDesc).toContain(`flagging ${patient.id}`);
    expect(JSON.stringify(audits[0])).toContain(`Bot/${bot.id}`);
  });
});

describe('the write path', () => {
  it('never waits for subscriptions: a write answers while its delivery is still unanswered', async () => {
    // The receiver holds every request: were the write to wait for its delivery, it would never answer.
    const held = receiver.hold('/slow');
    try {
      await create(subscription('Medication', `${receiver.url}slow`));
      const med = await create({ resourceType: 'Medication' });
      expect(med.id).toBeTruthy();
      await waitFor(() => (arrivals(med.id, '/slow').length === 1 ? true : undefined));
      // The delivery is still waiting for its answer (had the write waited, it would have timed out).
      expect(held.pending()).toBe(1);
      const second = await create({ resourceType: 'Medication' });
      expect(second.id).toBeTruthy();
    } finally {
      held.release();
    }
  });
});
