import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { createLogger } from '../platform/logger.js';
import { AUTOMATION_SYSTEM } from '../bots/audit.js';
import { ActiveSubscriptions } from './active.js';
import { CriteriaPretest } from './prefilter.js';
import { SubscriptionListener } from './listener.js';
import { ListenerHeartbeat } from './heartbeat.js';
import type { ChangeEvent } from './model.js';

let t: TestApp;

beforeAll(async () => {
  // The app's own heartbeat beats once at start, then not again during this test.
  t = await createTestApp({ config: { subscriptionHeartbeatMs: 3_600_000 } });
});
afterAll(async () => {
  await t?.close();
});

/** A listener and heartbeat of a second "process" on the test database, recording the evaluations it queues. */
function recoveringProcess() {
  const queued: ChangeEvent[] = [];
  const logger = createLogger('silent');
  const active = new ActiveSubscriptions(t.pool);
  const listener = new SubscriptionListener(
    active,
    new CriteriaPretest(t.services.search.registry, t.pool),
    {
      sendMany: async (_queue: string, items: { data: unknown }[]) => {
        for (const item of items) {
          queued.push(...(item.data as { changes: ChangeEvent[] }).changes);
        }
      },
    },
    { publish: async () => undefined },
    logger,
  );
  const heartbeat = new ListenerHeartbeat({ db: t.pool, active, listener, logger, intervalMs: 1000 });
  return { queued, listener, heartbeat };
}

describe('subscription listener crash recovery', () => {
  it("queues the dead process's window once, in projects with subscriptions, without automation audits", async () => {
    const projectId = t.testProject.projectId;
    const repo = t.services.systemRepo(projectId);
    for (const criteria of ['Patient', 'AuditEvent']) {
      await repo.createResource({
        resourceType: 'Subscription',
        status: 'active',
        reason: 'recovery',
        criteria,
        channel: { type: 'websocket' },
      } as Resource);
    }
    const patient = (family: string) => ({ resourceType: 'Patient', name: [{ family }] }) as Resource;
    const audit = (automation: boolean) =>
      ({
        resourceType: 'AuditEvent',
        type: { code: 'rest' },
        recorded: new Date().toISOString(),
        agent: [{ requestor: true, who: { display: 'x' } }],
        source: { observer: { display: 'x' } },
        ...(automation ? { subtype: [{ system: AUTOMATION_SYSTEM, code: 'subscription' }] } : {}),
      }) as Resource;

    const created = (await repo.createResource(patient('Created'))).resource;
    const updated = (await repo.createResource(patient('Updated'))).resource;
    const updatedV2 = await repo.updateResource({ ...updated, active: true });
    const deleted = (await repo.createResource(patient('Deleted'))).resource;
    await repo.deleteResource('Patient', deleted.id as string);
    const userAudit = (await repo.createResource(audit(false))).resource;
    const automationAudit = (await repo.createResource(audit(true))).resource;
    const before = (await repo.createResource(patient('Before'))).resource;
    const after = (await repo.createResource(patient('After'))).resource;
    const elsewhere = (await t.services.systemRepo(randomUUID()).createResource(patient('Elsewhere'))).resource;

    // The dead process last beat ten minutes ago: its window is 30 s before to 6 s after that beat.
    const beat = new Date(Date.now() - 600_000);
    const at = (id: string, time: Date) =>
      t.pool.query('UPDATE resource_history SET last_updated = $2 WHERE id = $1', [id, time]);
    for (const r of [created, updated, deleted, userAudit, automationAudit, elsewhere]) {
      await at(r.id as string, new Date(beat.getTime() + 1000));
    }
    await at(before.id as string, new Date(beat.getTime() - 3_600_000));
    await at(after.id as string, new Date(beat.getTime() + 3_600_000));
    await t.pool.query('DELETE FROM subscription_listener_heartbeat');
    const dead = randomUUID();
    await t.pool.query(
      'INSERT INTO subscription_listener_heartbeat (process_id, started_at, beat_at) VALUES ($1, $2, $2)',
      [dead, beat],
    );

    const one = recoveringProcess();
    const two = recoveringProcess();
    const windows = await Promise.all([one.heartbeat.beat(), two.heartbeat.beat()]);
    expect(windows.flat()).toHaveLength(1);
    await one.listener.drain();
    await two.listener.drain();

    const summary = [...one.queued, ...two.queued]
      .map((c) => `${c.interaction} ${c.resourceType}/${c.id}/${c.versionId}<${c.previousVersionId ?? ''}`)
      .sort();
    expect(summary).toEqual(
      [
        `create Patient/${created.id}/1<`,
        `create Patient/${updated.id}/1<`,
        `update Patient/${updated.id}/${updatedV2.versionId}<1`,
        `create Patient/${deleted.id}/1<`,
        `delete Patient/${deleted.id}/2<1`,
        `create AuditEvent/${userAudit.id}/1<`,
      ].sort(),
    );
    const rows = await t.pool.query<{ process_id: string }>('SELECT process_id FROM subscription_listener_heartbeat');
    expect(rows.rows.map((r) => r.process_id).sort()).toEqual(
      [one.heartbeat.processId, two.heartbeat.processId].sort(),
    );

    // A graceful stop removes the process's own row.
    await one.heartbeat.stop(() => one.listener.drain());
    const left = await t.pool.query<{ process_id: string }>('SELECT process_id FROM subscription_listener_heartbeat');
    expect(left.rows.map((r) => r.process_id)).toEqual([two.heartbeat.processId]);
  });
});
