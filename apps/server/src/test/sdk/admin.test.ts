/**
 * The SDK's project member methods against a real server: invite, then read, update (admin flag,
 * access policy, profile label) and remove a member, with the server's own-membership rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HearthClient, MemoryStorage, OperationOutcomeError, type AccessPolicy } from '@hearth/core';
import type { TestApp } from '../app.js';
import { serverWithSignedInAdmin } from './server.test-util.js';

let t: TestApp;
let hearth: HearthClient;

beforeAll(async () => {
  ({ t, hearth } = await serverWithSignedInAdmin());
});
afterAll(async () => {
  await t?.close();
});

async function rejection(promise: Promise<unknown>): Promise<OperationOutcomeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OperationOutcomeError);
  return error as OperationOutcomeError;
}

describe('HearthClient project members against a server', () => {
  it('updates a member to admin with a policy and a label, and removes them; not oneself', async () => {
    const projectId = hearth.getProject()?.reference?.split('/')[1] as string;
    // No rules: the member would see nothing, which is beside the point here.
    const policy = await hearth.createResource<AccessPolicy>({ resourceType: 'AccessPolicy', name: 'sdk members' });
    const email = `member-${Date.now()}@example.com`;
    const password = 'sdk-member-password-7310';
    const invited = await hearth.invite(projectId, {
      resourceType: 'Practitioner',
      firstName: 'Mem',
      lastName: 'Ber',
      email,
      password,
    });
    const id = invited.id as string;

    const updated = await hearth.updateProjectMember(projectId, {
      id,
      admin: true,
      accessPolicy: { reference: `AccessPolicy/${policy.id}` },
      profile: { display: 'Dr Mem Ber' },
    });
    expect(updated).toMatchObject({ admin: true, accessPolicy: { reference: `AccessPolicy/${policy.id}` } });
    expect(updated.profile?.display).toBe('Dr Mem Ber');
    const read = await hearth.getProjectMember(projectId, id);
    expect(read.profile).toEqual(updated.profile);
    expect((await hearth.updateProjectMember(projectId, { id, accessPolicy: null })).accessPolicy).toBeUndefined();

    // The new admin may not remove or demote themselves; the server's outcome says why.
    const member = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
    await member.signInWithPassword({ email, password });
    const own = await rejection(member.removeProjectMember(projectId, id));
    expect(own.status).toBe(403);
    expect(own.message).toMatch(/your own membership/);
    expect((await rejection(member.updateProjectMember(projectId, { id, admin: false }))).status).toBe(403);

    expect((await hearth.removeProjectMember(projectId, id)).resourceType).toBe('OperationOutcome');
    expect((await rejection(hearth.getProjectMember(projectId, id))).status).toBe(404);
    const details = await hearth.getProjectAdmin<{ members: { id: string }[] }>(projectId, { cache: 'no-cache' });
    expect(details.members.map((m) => m.id)).not.toContain(id);
  });
});
