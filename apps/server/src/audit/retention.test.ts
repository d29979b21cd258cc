/** Retention: old months dropped whole, a project's shorter retention deletes the start of its chain; chains still verify. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject, type TestProject } from '../test/auth.js';
import { verifyChain } from './chain.js';
import { listPartitions } from './partitions.js';
import { purgeTrail } from './retention.js';
import { entryOfAccess } from './stored-entry.js';

let t: TestApp;
const DAY = 86_400_000;

async function record(project: TestProject, times: Date[]): Promise<void> {
  const info = { projectId: project.projectId, agent: { profile: 'Practitioner/p' }, requestId: 'retention' };
  for (const recorded of times) {
    t.services.audit.writer.record(
      entryOfAccess(info, { interaction: 'read', action: 'R', patients: [], status: 200, recorded }),
    );
  }
  await t.services.audit.writer.flush();
}

const count = async (projectId: string) =>
  (await t.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_event WHERE project_id = $1', [projectId]))
    .rows[0].n;

beforeAll(async () => {
  t = await createTestApp();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('retention', () => {
  it('drops whole months older than the server retention; the rest of the chain verifies', async () => {
    const p = await createTestProject(t.app, t.services, 'Old and new');
    await record(p, [
      new Date('2020-01-10T00:00:00Z'),
      new Date('2020-01-20T00:00:00Z'),
      new Date('2020-02-05T00:00:00Z'),
    ]);
    await record(p, [new Date(), new Date()]);
    expect((await listPartitions(t.pool)).map((x) => x.month)).toEqual(expect.arrayContaining(['202001', '202002']));
    const before = await count(p.projectId);
    const result = await purgeTrail({ pool: t.pool, logger: t.services.audit['options'].logger, serverDays: 365 });
    expect(result.droppedPartitions).toEqual(expect.arrayContaining(['audit_event_p202001', 'audit_event_p202002']));
    expect((await listPartitions(t.pool)).map((x) => x.month)).not.toContain('202001');
    const left = await t.pool.query<{ recorded: Date }>('SELECT recorded FROM audit_event WHERE project_id = $1', [
      p.projectId,
    ]);
    expect(left.rows.length).toBeLessThanOrEqual(before - 3);
    expect(left.rows.every((r) => r.recorded.getFullYear() > 2020)).toBe(true);
    const report = await verifyChain(t.pool, p.projectId);
    expect(report.broken).toBeUndefined();
    expect(report.first).toBe(report.head - left.rows.length + 1);
  });

  it("a project's own retention deletes its older entries only", async () => {
    const short = await createTestProject(t.app, t.services, 'Short retention');
    const long = await createTestProject(t.app, t.services, 'Kept');
    const old = new Date(Date.now() - 60 * DAY);
    await record(short, [old, old, new Date()]);
    await record(long, [old, new Date()]);
    const repo = t.services.systemRepo(short.projectId);
    const project = (await repo.readResource('Project', short.projectId)).resource;
    await repo.updateResource({ ...project, setting: [{ name: 'auditRetentionDays', valueInteger: 30 }] } as Resource);
    const longBefore = await count(long.projectId);
    const result = await purgeTrail({ pool: t.pool, logger: t.services.audit['options'].logger, serverDays: 0 });
    expect(result.deleted).toBeGreaterThanOrEqual(2);
    const expired = await t.pool.query('SELECT 1 FROM audit_event WHERE project_id = $1 AND recorded < $2', [
      short.projectId,
      new Date(Date.now() - 30 * DAY),
    ]);
    expect(expired.rows).toEqual([]);
    expect(await count(short.projectId)).toBeGreaterThan(0);
    expect(await count(long.projectId)).toBe(longBefore);
    expect((await verifyChain(t.pool, short.projectId)).broken).toBeUndefined();
    // Deleting the start of a chain by hand, without retention, is a break.
    await t.pool.query(
      'DELETE FROM audit_event WHERE project_id = $1 AND seq = (SELECT min(seq) FROM audit_event WHERE project_id = $1)',
      [long.projectId],
    );
    expect((await verifyChain(t.pool, long.projectId)).broken?.reason).toMatch(/missing/);
  });

  it('refuses a retention setting that is not a positive number of days', async () => {
    const repo = t.services.systemRepo(t.testProject.projectId);
    const project = (await repo.readResource('Project', t.testProject.projectId)).resource;
    await expect(
      repo.updateResource({ ...project, setting: [{ name: 'auditRetentionDays', valueInteger: 0 }] } as Resource),
    ).rejects.toThrow(/auditRetentionDays/);
  });
});
