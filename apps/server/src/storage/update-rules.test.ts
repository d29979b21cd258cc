/**
 * Update rules (types.ts: UpdateRule) run after an update that they apply to, in its transaction,
 * with the version it replaced; a rule that throws takes the update back with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Basic, Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { Repository } from './repository.js';
import type { UpdateRule } from './types.js';

let t: TestApp;
const basic = (text: string): Resource => ({ resourceType: 'Basic', code: { text } }) as Resource;
const seen: { written: Resource; previous: Resource | undefined }[] = [];

const rule: UpdateRule = {
  resourceType: 'Basic',
  applies: (r) => (r as { code?: { text?: string } }).code?.text !== 'plain',
  async afterUpdate(repo: Repository, written, previous) {
    seen.push({ written, previous });
    const text = (written as { code?: { text?: string } }).code?.text;
    // The rule's own write goes into the update's transaction: it commits or rolls back with it.
    await repo.createResource(basic(`plain, after ${String(written.id)} became ${String(text)}`));
    if (text === 'refuse') throw new Error('the rule refuses');
  },
};

let repo: Repository;

beforeAll(async () => {
  t = await createTestApp();
  const projectId = t.testProject.projectId;
  repo = new Repository(
    { ...t.services.repositoryDeps, updateRules: [rule] },
    { projectId, readProjects: [projectId], system: true },
  );
});
afterAll(async () => {
  await t?.close();
});

/** How many Basics the rule wrote with this text. */
async function notes(text: string): Promise<number> {
  const ids = await repo.findMatches('Basic', new URLSearchParams({ 'code:text': text }).toString(), 100);
  const rows = await repo.readResources('Basic', ids);
  return rows.filter((r) => (r.resource as Basic).code.text === text).length;
}

describe('update rules', () => {
  it('run after an update they apply to, given the written and the replaced version, in its transaction', async () => {
    const created = (await repo.createResource(basic('plain'))).resource;
    seen.length = 0;
    const updated = await repo.updateResource({ ...created, code: { text: 'note' } } as Resource);
    expect(seen).toHaveLength(1);
    expect(seen[0].written).toMatchObject({ id: created.id, meta: { versionId: '2' }, code: { text: 'note' } });
    expect(seen[0].previous).toMatchObject({ id: created.id, meta: { versionId: '1' }, code: { text: 'plain' } });
    expect(updated.versionId).toBe(2);
    expect(await notes(`plain, after ${String(created.id)} became note`)).toBe(1);
  });

  it('do not run for updates they do not apply to, nor for creates', async () => {
    seen.length = 0;
    const created = (await repo.createResource(basic('note'))).resource;
    await repo.updateResource({ ...created, code: { text: 'plain' } } as Resource);
    expect(seen).toHaveLength(0);
  });

  it('see no previous version when the update created the resource (PUT to a new id)', async () => {
    seen.length = 0;
    await repo.updateResource({ ...basic('note'), id: `rule-${Date.now()}` });
    expect(seen).toHaveLength(1);
    expect(seen[0].previous).toBeUndefined();
  });

  it('take the update back when they throw', async () => {
    const created = (await repo.createResource(basic('plain'))).resource;
    await expect(repo.updateResource({ ...created, code: { text: 'refuse' } } as Resource)).rejects.toThrow(
      'the rule refuses',
    );
    const current = await repo.readResource('Basic', created.id as string);
    expect(current.versionId).toBe(1);
    expect((current.resource as Basic).code.text).toBe('plain');
    expect(await notes(`plain, after ${String(created.id)} became refuse`)).toBe(0);
  });
});
