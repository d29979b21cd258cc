/** Patient/{id}/$everything against a real server: content, paging, _since, _type, access policies, scopes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember, createTestProject, type TestMember } from '../test/auth.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

type Saved = Resource & { id: string; meta: { lastUpdated: string } };

async function post(resource: Resource, headers: Record<string, string> = t.authHeaders): Promise<Saved> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/${resource.resourceType}`,
    headers: { ...headers, 'content-type': FHIR },
    payload: resource,
  });
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

async function everything(
  url: string,
  headers: Record<string, string> = t.authHeaders,
): Promise<{ status: number; bundle: Bundle }> {
  const res = await t.app.inject({
    url: url.startsWith('http') ? new URL(url).pathname + new URL(url).search : url,
    headers,
  });
  return { status: res.statusCode, bundle: res.json() };
}

const keys = (bundle: Bundle, mode?: string) =>
  (bundle.entry ?? [])
    .filter((e) => !mode || e.search?.mode === mode)
    .map((e) => `${e.resource?.resourceType}/${e.resource?.id}`)
    .sort();

let alice: Saved;
let bob: Saved;
let org: Saved;
let doctor: Saved;
let obs: Saved[];
let encounter: Saved;
let condition: Saved;
let bobObs: Saved;

beforeAll(async () => {
  t = await createTestApp();
  org = await post({ resourceType: 'Organization', name: 'Clinic' });
  doctor = await post({ resourceType: 'Practitioner', name: [{ family: 'Who' }] });
  alice = await post({
    resourceType: 'Patient',
    name: [{ family: 'Alice' }],
    managingOrganization: { reference: `Organization/${org.id}` },
  } as Resource);
  bob = await post({ resourceType: 'Patient', name: [{ family: 'Bob' }] });
  obs = [];
  for (const status of ['final', 'final', 'preliminary']) {
    obs.push(
      await post({
        resourceType: 'Observation',
        status,
        code: { text: 'weight' },
        subject: { reference: `Patient/${alice.id}` },
        performer: [{ reference: `Practitioner/${doctor.id}` }],
      } as Resource),
    );
  }
  encounter = await post({
    resourceType: 'Encounter',
    status: 'finished',
    class: { code: 'AMB' },
    subject: { reference: `Patient/${alice.id}` },
  } as Resource);
  condition = await post({
    resourceType: 'Condition',
    subject: { reference: `Patient/${alice.id}` },
    code: { text: 'cough' },
  } as Resource);
  bobObs = await post({
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'weight' },
    subject: { reference: `Patient/${bob.id}` },
  } as Resource);
});
afterAll(async () => {
  await t?.close();
});

describe('Patient/{id}/$everything', () => {
  it('answers the patient, its compartment and the practitioners and organizations they reference', async () => {
    const { status, bundle } = await everything(`/fhir/R4/Patient/${alice.id}/$everything`);
    expect(status).toBe(200);
    expect(bundle).toMatchObject({ resourceType: 'Bundle', type: 'searchset' });
    expect(keys(bundle, 'match')).toEqual(
      [
        `Patient/${alice.id}`,
        ...obs.map((o) => `Observation/${o.id}`),
        `Encounter/${encounter.id}`,
        `Condition/${condition.id}`,
      ].sort(),
    );
    expect(keys(bundle, 'include')).toEqual([`Organization/${org.id}`, `Practitioner/${doctor.id}`].sort());
    expect(keys(bundle)).not.toContain(`Observation/${bobObs.id}`);
    expect(keys(bundle)).not.toContain(`Patient/${bob.id}`);
    expect(bundle.link?.find((l) => l.relation === 'self')?.url).toContain(`/Patient/${alice.id}/$everything`);
  });

  it('accepts POST with a Parameters body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/Patient/${alice.id}/$everything`,
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: { resourceType: 'Parameters', parameter: [{ name: '_type', valueString: 'Encounter' }] },
    });
    expect(res.statusCode).toBe(200);
    expect(keys(res.json(), 'match')).toEqual([`Encounter/${encounter.id}`]);
  });

  it('pages with _count through next links of the operation itself', async () => {
    const seen: string[] = [];
    let url: string | undefined = `/fhir/R4/Patient/${alice.id}/$everything?_count=2`;
    let pages = 0;
    while (url) {
      const { status, bundle } = await everything(url);
      expect(status).toBe(200);
      expect(keys(bundle, 'match').length).toBeLessThanOrEqual(2);
      seen.push(...keys(bundle, 'match'));
      url = bundle.link?.find((l) => l.relation === 'next')?.url;
      if (url) expect(url).toMatch(/\/Patient\/[\w-]+\/\$everything\?.*_count=2.*_cursor=/);
      pages++;
      expect(pages).toBeLessThan(10);
    }
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(keys((await everything(`/fhir/R4/Patient/${alice.id}/$everything`)).bundle, 'match'));
  });

  it('narrows to _type and to what changed after _since', async () => {
    const typed = await everything(`/fhir/R4/Patient/${alice.id}/$everything?_type=Observation,Condition`);
    expect(keys(typed.bundle, 'match')).toEqual(
      [...obs.map((o) => `Observation/${o.id}`), `Condition/${condition.id}`].sort(),
    );
    const since = new Date(Date.parse(condition.meta.lastUpdated) + 1).toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const changed = await t.app.inject({
      method: 'PUT',
      url: `/fhir/R4/Observation/${obs[0].id}`,
      headers: { ...t.authHeaders, 'content-type': FHIR },
      payload: { ...obs[0], meta: undefined, status: 'amended' },
    });
    expect(changed.statusCode).toBe(200);
    const recent = await everything(`/fhir/R4/Patient/${alice.id}/$everything?_since=${encodeURIComponent(since)}`);
    expect(keys(recent.bundle, 'match')).toEqual([`Observation/${obs[0].id}`]);
    const bad = await everything(`/fhir/R4/Patient/${alice.id}/$everything?_since=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.bundle.resourceType).toBe('OperationOutcome');
    const badType = await everything(`/fhir/R4/Patient/${alice.id}/$everything?_type=Nope`);
    expect(badType.status).toBe(400);
  });

  it('keeps to care dates with start and end: dated resources inside them, undated ones always', async () => {
    const carol = await post({ resourceType: 'Patient', name: [{ family: 'Carol' }] });
    const subject = { reference: `Patient/${carol.id}` };
    const dated = async (when: string) =>
      post({
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'bp' },
        subject,
        effectiveDateTime: when,
      } as Resource);
    const early = await dated('2019-06-01');
    const inside = await dated('2021-03-04T10:00:00Z');
    const late = await dated('2023-01-15');
    const visit = await post({
      resourceType: 'Encounter',
      status: 'finished',
      class: { code: 'AMB' },
      subject,
      period: { start: '2020-12-30', end: '2021-01-02' },
    } as Resource);
    const undated = await post({ resourceType: 'Condition', subject, code: { text: 'asthma' } } as Resource);
    const url = `/fhir/R4/Patient/${carol.id}/$everything`;

    const { status, bundle } = await everything(`${url}?start=2020-01-01&end=2022-12-31`);
    expect(status).toBe(200);
    expect(keys(bundle, 'match')).toEqual(
      [`Patient/${carol.id}`, `Observation/${inside.id}`, `Encounter/${visit.id}`, `Condition/${undated.id}`].sort(),
    );
    // Either bound alone; an end date covers its whole day.
    expect(keys((await everything(`${url}?start=2022-01-01`)).bundle, 'match')).toContain(`Observation/${late.id}`);
    expect(keys((await everything(`${url}?start=2022-01-01`)).bundle, 'match')).not.toContain(
      `Observation/${inside.id}`,
    );
    const until = keys((await everything(`${url}?end=2019-06-01`)).bundle, 'match');
    expect(until).toContain(`Observation/${early.id}`);
    expect(until).not.toContain(`Encounter/${visit.id}`);
    // The bounds are kept in the links.
    expect(bundle.link?.find((l) => l.relation === 'self')?.url).toContain('start=2020-01-01');

    const bad = await everything(`${url}?start=soon`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.bundle)).toContain('start must be a FHIR date');
    expect((await everything(`${url}?start=2022-01-01&end=2021-01-01`)).status).toBe(400);
  });

  it('is 404 for an unknown patient and for a patient of another project', async () => {
    expect((await everything(`/fhir/R4/Patient/does-not-exist/$everything`)).status).toBe(404);
    const other = await createTestProject(t.app, t.services, 'Other');
    const res = await everything(`/fhir/R4/Patient/${alice.id}/$everything`, other.headers);
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.bundle)).not.toContain(obs[0].id);
  });

  it("obeys the caller's access policy exactly as search does", async () => {
    const policy = await post({
      resourceType: 'AccessPolicy',
      resource: [{ resourceType: 'Patient' }, { resourceType: 'Observation', criteria: 'Observation?status=final' }],
    } as Resource);
    const m: TestMember = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    const { status, bundle } = await everything(`/fhir/R4/Patient/${alice.id}/$everything`, m.headers);
    expect(status).toBe(200);
    // obs[0] was amended above, obs[2] is preliminary: only obs[1] is final. No Encounter, Condition,
    // Practitioner or Organization: the policy does not name them.
    expect(keys(bundle)).toEqual([`Observation/${obs[1].id}`, `Patient/${alice.id}`].sort());
    const search = await t.app.inject({ url: `/fhir/R4/Observation?subject=Patient/${alice.id}`, headers: m.headers });
    expect(keys(search.json())).toEqual([`Observation/${obs[1].id}`]);
    // A patient the policy hides is a 404.
    const hidden = await post({
      resourceType: 'AccessPolicy',
      resource: [{ resourceType: 'Patient', criteria: `Patient?_id=${bob.id}` }],
    } as Resource);
    const n = await addTestMember(t.app, t.services, t.testProject.projectId, {
      membership: { accessPolicy: { reference: `AccessPolicy/${hidden.id}` } },
    });
    expect((await everything(`/fhir/R4/Patient/${alice.id}/$everything`, n.headers)).status).toBe(404);
    expect((await everything(`/fhir/R4/Patient/${bob.id}/$everything`, n.headers)).status).toBe(200);
  });

  it('keeps to the SMART scopes of the token', async () => {
    const m = await addTestMember(t.app, t.services, t.testProject.projectId, {
      scope: 'openid user/Patient.rs user/Encounter.rs',
    });
    const { status, bundle } = await everything(`/fhir/R4/Patient/${alice.id}/$everything`, m.headers);
    expect(status).toBe(200);
    expect(keys(bundle)).toEqual([`Encounter/${encounter.id}`, `Patient/${alice.id}`].sort());
  });
});
