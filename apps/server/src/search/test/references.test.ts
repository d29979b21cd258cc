import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';
import { auth, FHIR, search, status, type SearchBundle } from './helpers.js';

let t: TestApp;
const byId = new Map<string, string>();
const idOf = new Map<string, string>();

/** Creates with a client-chosen id (PUT), so that references can be written ahead. */
async function put(name: string, resource: Record<string, unknown>): Promise<void> {
  const id = `${name}`;
  const res = await t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/${resource.resourceType as string}/${id}`,
    headers: { ...t.authHeaders, 'content-type': FHIR, ...auth(t) },
    payload: JSON.stringify({ ...resource, id }),
  });
  if (res.statusCode >= 300) throw new Error(`${name}: ${res.statusCode} ${res.body}`);
  byId.set(id, name);
  idOf.set(name, id);
}

function matches(b: SearchBundle): string[] {
  return (b.entry ?? [])
    .filter((e) => e.search.mode === 'match')
    .map((e) => e.resource.id)
    .sort();
}
function included(b: SearchBundle): string[] {
  return (b.entry ?? [])
    .filter((e) => e.search.mode === 'include')
    .map((e) => `${e.resource.resourceType}/${e.resource.id}`)
    .sort();
}
async function find(url: string): Promise<string[]> {
  return matches(await search(t, url));
}

beforeAll(async () => {
  t = await createTestApp();
  await put('org-acme', { resourceType: 'Organization', name: 'Acme Health' });
  await put('org-other', {
    resourceType: 'Organization',
    name: 'Other Clinic',
    partOf: { reference: 'Organization/org-acme' },
  });
  await put('pat-alice', {
    resourceType: 'Patient',
    name: [{ family: 'Alison', given: ['Alice'] }],
    managingOrganization: { reference: 'Organization/org-acme' },
  });
  await put('pat-bob', {
    resourceType: 'Patient',
    identifier: [{ value: 'shared-1' }],
    name: [{ family: 'Roberts', given: ['Bob'] }],
    managingOrganization: { reference: 'Organization/org-other' },
  });
  await put('grp-alpha', {
    resourceType: 'Group',
    type: 'person',
    actual: true,
    name: 'Alpha group',
    identifier: [{ value: 'shared-1' }],
  });
  await put('prac-carol', { resourceType: 'Practitioner', name: [{ family: 'Carolson' }] });
  await put('enc-1', {
    resourceType: 'Encounter',
    status: 'finished',
    class: { code: 'AMB' },
    subject: { reference: 'Patient/pat-alice' },
  });
  await put('obs-a1', {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '1' }] },
    subject: { reference: 'Patient/pat-alice' },
    encounter: { reference: 'Encounter/enc-1' },
    performer: [{ reference: 'Practitioner/prac-carol' }],
  });
  await put('obs-a2', {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '2' }] },
    subject: { reference: `${t.baseUrl}fhir/R4/Patient/pat-alice` },
  });
  await put('obs-b1', {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '1' }] },
    subject: { reference: 'Patient/pat-bob' },
  });
  await put('obs-g1', {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '3' }] },
    subject: { reference: 'Group/grp-alpha' },
  });
  await put('obs-ext', {
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'x' },
    subject: { reference: 'http://elsewhere.org/fhir/Patient/99' },
  });
  await put('obs-ident', {
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'y' },
    subject: { identifier: { system: 'http://mrn', value: 'M-7' } },
  });
  await put('prov-1', {
    resourceType: 'Provenance',
    target: [{ reference: 'Observation/obs-a1' }],
    recorded: '2020-01-01T00:00:00Z',
    agent: [{ who: { reference: 'Practitioner/prac-carol' } }],
  });
  await put('mr-contained', {
    resourceType: 'MedicationRequest',
    status: 'active',
    intent: 'order',
    contained: [
      { resourceType: 'Medication', id: 'med1', code: { coding: [{ system: 'http://rxnorm', code: '12345' }] } },
    ],
    medicationReference: { reference: '#med1' },
    subject: { reference: 'Patient/pat-alice' },
  });
  await put('med-aspirin', {
    resourceType: 'Medication',
    code: { coding: [{ system: 'http://rxnorm', code: '777' }] },
  });
  await put('mr-ref', {
    resourceType: 'MedicationRequest',
    status: 'active',
    intent: 'order',
    medicationReference: { reference: 'Medication/med-aspirin' },
    subject: { reference: 'Patient/pat-bob' },
  });
  await put('qr-1', {
    resourceType: 'QuestionnaireResponse',
    status: 'completed',
    questionnaire: 'http://forms.org/Questionnaire/intake|2.0',
  });
});
afterAll(async () => {
  await t?.close();
});

describe('reference', () => {
  it('matches Type/id, bare ids, absolute URLs on this server, and type modifiers', async () => {
    expect(await find('Observation?subject=Patient/pat-alice')).toEqual(['obs-a1', 'obs-a2']);
    expect(await find('Observation?subject=pat-alice')).toEqual(['obs-a1', 'obs-a2']);
    expect(await find(`Observation?subject=${t.baseUrl}fhir/R4/Patient/pat-bob`)).toEqual(['obs-b1']);
    expect(await find('Observation?subject:Group=grp-alpha')).toEqual(['obs-g1']);
    expect(await find('Observation?subject:Patient=grp-alpha')).toEqual([]);
    expect(await find('Observation?patient=Patient/pat-alice')).toEqual(['obs-a1', 'obs-a2']);
    expect(await find('Observation?subject=http://elsewhere.org/fhir/Patient/99')).toEqual(['obs-ext']);
    expect(await find('Observation?subject=Patient/99')).toEqual([]);
  });
  it(':identifier, :missing and canonical references', async () => {
    expect(await find('Observation?subject:identifier=http://mrn|M-7')).toEqual(['obs-ident']);
    expect(await find('Observation?encounter:missing=false')).toEqual(['obs-a1']);
    expect(await find('QuestionnaireResponse?questionnaire=http://forms.org/Questionnaire/intake')).toEqual(['qr-1']);
  });
});

describe('chains', () => {
  it('follows one and several links', async () => {
    expect(await find('Observation?subject:Patient.name=alison')).toEqual(['obs-a1', 'obs-a2']);
    expect(await find('Observation?subject.name=rob')).toEqual(['obs-b1']);
    expect(await find('Observation?subject:Patient.organization.name=acme')).toEqual(['obs-a1', 'obs-a2']);
    expect(await find('Observation?subject:Patient.organization.partof.name=acme')).toEqual(['obs-b1']);
  });
  it('searches every target type that has the parameter when no type is given', async () => {
    // subject may be a Patient, Group, Device or Location; all have "identifier", only Patient "name".
    expect(await find('Observation?subject.identifier=shared-1')).toEqual(['obs-b1', 'obs-g1']);
    expect(await find('Observation?subject.name=alpha')).toEqual([]);
  });
  it('looks inside contained resources', async () => {
    expect(await find('MedicationRequest?medication.code=12345')).toEqual(['mr-contained']);
    expect(await find('MedicationRequest?medication.code=777')).toEqual(['mr-ref']);
    // A contained resource is not a match of its own.
    expect(await find('Medication?code=12345')).toEqual([]);
  });
});

describe('resources held inline (Bundle.composition, Bundle.message)', () => {
  it("chain into a document's Composition and a message's MessageHeader", async () => {
    await put('doc-alice', {
      resourceType: 'Bundle',
      type: 'document',
      timestamp: '2024-05-01T10:00:00Z',
      identifier: { system: 'http://example.org/docs', value: 'doc-1' },
      entry: [
        {
          fullUrl: 'urn:uuid:5b4c4b2e-7a0e-4d43-9e87-3b1b9f1a0c01',
          resource: {
            resourceType: 'Composition',
            status: 'final',
            type: { coding: [{ system: 'http://loinc.org', code: '18842-5' }] },
            subject: { reference: 'Patient/pat-alice' },
            date: '2024-05-01',
            author: [{ reference: 'Practitioner/prac-carol' }],
            title: 'Discharge summary',
          },
        },
      ],
    });
    await put('msg-bob', {
      resourceType: 'Bundle',
      type: 'message',
      timestamp: '2024-05-02T10:00:00Z',
      entry: [
        {
          fullUrl: 'urn:uuid:5b4c4b2e-7a0e-4d43-9e87-3b1b9f1a0c02',
          resource: {
            resourceType: 'MessageHeader',
            eventCoding: { system: 'http://example.org/events', code: 'admit' },
            source: { endpoint: 'http://example.org/sender' },
            focus: [{ reference: 'Patient/pat-bob' }],
          },
        },
      ],
    });
    expect(await find('Bundle?composition.subject=Patient/pat-alice')).toEqual(['doc-alice']);
    expect(await find('Bundle?composition.subject.name=alison')).toEqual(['doc-alice']);
    expect(await find('Bundle?composition.subject:Patient.organization.name=acme')).toEqual(['doc-alice']);
    expect(await find('Bundle?composition.type=http://loinc.org|18842-5')).toEqual(['doc-alice']);
    expect(await find('Bundle?composition.subject=Patient/pat-bob')).toEqual([]);
    expect(await find('Bundle?message.focus=Patient/pat-bob')).toEqual(['msg-bob']);
    expect(await find('Bundle?message.event=admit')).toEqual(['msg-bob']);
    // The inline resources are not matches of their own.
    expect(await find('Composition?subject=Patient/pat-alice')).toEqual([]);
    expect(await find('MessageHeader?focus=Patient/pat-bob')).toEqual([]);
  });
});

describe('_has', () => {
  it('finds resources referenced by matching ones, nested', async () => {
    expect(await find('Patient?_has:Observation:subject:code=1')).toEqual(['pat-alice', 'pat-bob']);
    expect(await find('Patient?_has:Observation:subject:code=2')).toEqual(['pat-alice']);
    expect(await find('Patient?_has:Observation:patient:_has:Provenance:target:agent=Practitioner/prac-carol')).toEqual(
      ['pat-alice'],
    );
    expect(await find('Practitioner?_has:Observation:performer:subject.name=alison')).toEqual(['prac-carol']);
  });
});

describe('_include and _revinclude', () => {
  it('includes referenced resources, with a target type, * and :iterate', async () => {
    const b = await search(t, 'Observation?code=1&_include=Observation:subject');
    expect(matches(b)).toEqual(['obs-a1', 'obs-b1']);
    expect(included(b)).toEqual(['Patient/pat-alice', 'Patient/pat-bob']);
    const typed = await search(t, 'Observation?code=1&_include=Observation:performer:Practitioner');
    expect(included(typed)).toEqual(['Practitioner/prac-carol']);
    const all = await search(t, 'Observation?_id=obs-a1&_include=Observation:*');
    expect(included(all)).toEqual(['Encounter/enc-1', 'Patient/pat-alice', 'Practitioner/prac-carol']);
    const iterate = await search(
      t,
      'Observation?_id=obs-b1&_include=Observation:subject&_include:iterate=Patient:organization&_include:iterate=Organization:partof',
    );
    expect(included(iterate)).toEqual(['Organization/org-acme', 'Organization/org-other', 'Patient/pat-bob']);
  });
  it('revincludes referencing resources', async () => {
    const b = await search(t, 'Patient?_id=pat-alice&_revinclude=Observation:subject');
    expect(included(b)).toEqual(['Observation/obs-a1', 'Observation/obs-a2']);
    const it2 = await search(
      t,
      'Patient?_id=pat-alice&_revinclude=Observation:subject&_revinclude:iterate=Provenance:target',
    );
    expect(included(it2)).toEqual(['Observation/obs-a1', 'Observation/obs-a2', 'Provenance/prov-1']);
  });
  it('rejects an include on a parameter that is not a reference', async () => {
    expect((await status(t, 'Observation?_include=Observation:code')).status).toBe(400);
  });
});

describe('compartments', () => {
  it('searches a Patient compartment by type and across types', async () => {
    expect(await find('Patient/pat-alice/Observation')).toEqual(['obs-a1', 'obs-a2']);
    expect(await find('Patient/pat-alice/Observation?code=2')).toEqual(['obs-a2']);
    const everything = await search(t, 'Patient/pat-alice/*');
    expect((everything.entry ?? []).map((e) => `${e.resource.resourceType}/${e.resource.id}`).sort()).toEqual([
      'Encounter/enc-1',
      'MedicationRequest/mr-contained',
      'Observation/obs-a1',
      'Observation/obs-a2',
      'Patient/pat-alice',
    ]);
    expect(await find('Patient?_compartment=Patient/pat-bob')).toEqual(['pat-bob']);
  });
  it('searches other compartments through their parameters', async () => {
    expect(await find('Practitioner/prac-carol/Observation')).toEqual(['obs-a1']);
    expect(await find('Encounter/enc-1/Observation')).toEqual(['obs-a1']);
  });
});
