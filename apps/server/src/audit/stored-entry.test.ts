/** Stored entries: the facts serve exactly the event they were built from, with the same search columns, in far fewer bytes. */
import { describe, expect, it } from 'vitest';
import { buildAuditEvent, columnsOf } from './audit-event.js';
import { entryOfAccess, entryOfStored, storedEvent, storedEventText } from './stored-entry.js';
import type { AuditAccess, AuditRequestInfo } from './types.js';

const PROJECT = '0b6f5c2e-8d1f-4c1e-9a57-3f2b4c5d6e7f';
const recorded = new Date('2026-11-29T19:34:16.806Z');

const practitioner: AuditRequestInfo = {
  projectId: PROJECT,
  agent: {
    profile: 'Practitioner/c3277f47-ad03-4aa0-849b-59ffb604d500',
    profileDisplay: 'Dr "Quote" \\ Backslash',
    membership: 'ProjectMembership/35595f16-102b-47e4-a558-af94a75efb86',
    login: 'User/3be6b43f-d8de-43c7-81a4-f0ec3eb7d501',
  },
  address: '198.51.100.7',
  userAgent: `agent/${'x'.repeat(700)}`,
  requestId: '31e9d373-3337-4580-9cc5-4df029691379',
};
const anonymous: AuditRequestInfo = { projectId: PROJECT, agent: {}, requestId: 'r-anon' };
// A client application signs in as itself: its login is its profile.
const client: AuditRequestInfo = {
  projectId: PROJECT,
  agent: { profile: 'ClientApplication/app-1', login: 'ClientApplication/app-1', membership: 'ProjectMembership/m-2' },
  requestId: 'r-client',
};

const accesses: AuditAccess[] = [
  {
    interaction: 'read',
    action: 'R',
    resourceType: 'Patient',
    id: 'p1',
    patients: ['Patient/p1'],
    status: 200,
    recorded,
  },
  {
    interaction: 'vread',
    action: 'R',
    resourceType: 'Observation',
    id: 'o1',
    versionId: 3,
    patients: ['Patient/p1'],
    status: 200,
    recorded,
  },
  {
    interaction: 'search-type',
    action: 'R',
    resourceType: 'Observation',
    query: 'subject=Patient/p1&code=http://loinc.org|8867-4 {"facts":1,}',
    count: 2,
    patients: ['Patient/p1', 'Patient/p2'],
    status: 200,
    recorded,
  },
  { interaction: 'search-system', action: 'R', query: '', count: 0, patients: [], status: 200, recorded },
  {
    interaction: 'operation',
    operation: 'everything',
    action: 'E',
    resourceType: 'Patient',
    id: 'p2',
    patients: ['Patient/p2'],
    status: 200,
    recorded,
  },
  {
    interaction: 'create',
    action: 'C',
    resourceType: 'Patient',
    id: 'p3',
    versionId: 1,
    patients: [],
    status: 201,
    recorded,
  },
  {
    interaction: 'delete',
    action: 'D',
    resourceType: 'Condition',
    id: 'c1',
    patients: ['Patient/p1'],
    status: 404,
    recorded,
  },
  { interaction: 'update', action: 'U', resourceType: 'Patient', id: 'p4', patients: [], status: 500, recorded },
];

const cases = [practitioner, anonymous, client].flatMap((request) => accesses.map((access) => ({ request, access })));

describe('stored entries', () => {
  it.each(cases)('serve the event built from their facts: $access.interaction', ({ request, access }) => {
    const entry = entryOfAccess(request, access);
    const served = storedEvent(PROJECT, entry.content);
    expect(served).toEqual(buildAuditEvent(request, access, entry.id));
    expect(storedEventText(PROJECT, entry.content)).toBe(JSON.stringify(served));
    expect(entry.columns).toEqual(columnsOf(served));
    expect([entry.id, entry.recorded]).toEqual([served.id, served.recorded]);
    // What the outbox and verification read back is the same entry.
    expect(entryOfStored(PROJECT, entry.content)).toEqual(entry);
  });

  it('store a fraction of the bytes of the event they serve', () => {
    const entry = entryOfAccess({ ...practitioner, userAgent: 'Mozilla/5.0' }, accesses[0]);
    expect(entry.content.length).toBeLessThan(storedEventText(PROJECT, entry.content).length / 2.5);
  });

  it('get time-ordered ids, so that the id index grows at its end', async () => {
    const first = entryOfAccess(practitioner, accesses[0]).id;
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = entryOfAccess(practitioner, accesses[0]).id;
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect([v7.test(first), v7.test(second), first < second]).toEqual([true, true, true]);
  });

  it('keep a mirrored AuditEvent (a sign-in) as it is', () => {
    const signIn = JSON.stringify({
      resourceType: 'AuditEvent',
      id: 'login-1',
      recorded: recorded.toISOString(),
      action: 'E',
      outcome: '0',
      type: { code: '110114' },
      agent: [{ who: { reference: 'User/u1' } }],
      entity: [{ what: { reference: 'Patient/p1' } }],
    });
    expect(storedEventText(PROJECT, signIn)).toBe(signIn);
    const entry = entryOfStored(PROJECT, signIn);
    expect(entry).toMatchObject({ id: 'login-1', content: signIn, recorded: recorded.toISOString() });
    expect(entry.columns).toEqual({
      action: 'E',
      outcome: '0',
      typeCode: '110114',
      agent: ['User/u1'],
      entity: ['Patient/p1'],
      patient: ['Patient/p1'],
    });
  });
});
