import { describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createLogger } from '../platform/logger.js';
import type { WriteEvent } from '../storage/types.js';
import type { ActiveSubscriptions } from './active.js';
import type { CriteriaPretest } from './prefilter.js';
import { SubscriptionListener } from './listener.js';
import { parseSubscription, type ChangeEvent } from './model.js';

const PROJECT = '00000000-0000-4000-8000-000000000001';

const subscription = parseSubscription({
  resourceType: 'Subscription',
  id: 's1',
  meta: { project: PROJECT },
  status: 'active',
  criteria: 'Patient',
  channel: { type: 'websocket' },
} as unknown as Resource);

function write(id: string): WriteEvent {
  const resource = { resourceType: 'Patient', id } as Resource;
  return {
    interaction: 'create',
    version: {
      resourceType: 'Patient',
      id,
      projectId: PROJECT,
      versionId: 1,
      lastUpdated: new Date(),
      deleted: false,
      resource,
      content: JSON.stringify(resource),
      compartments: [],
    },
  };
}

/** A listener whose queue insert fails `failures` times before it succeeds. */
function listener(failures: number) {
  const queued: ChangeEvent[] = [];
  let attempts = 0;
  const active = { forType: async () => [subscription], invalidate: () => undefined };
  const it = new SubscriptionListener(
    active as unknown as ActiveSubscriptions,
    { mayMatch: async () => true } as unknown as CriteriaPretest,
    {
      sendMany: async (_queue: string, items: { data: unknown }[]) => {
        attempts++;
        if (attempts <= failures) {
          throw new Error('connection terminated');
        }
        for (const item of items) {
          queued.push(...(item.data as { changes: ChangeEvent[] }).changes);
        }
      },
    },
    { publish: async () => undefined },
    createLogger('silent'),
  );
  return { it, queued, attempts: () => attempts };
}

describe('subscription listener', () => {
  it('retries a failed queue insert with the same changes, counting them unqueued meanwhile', async () => {
    const l = listener(2);
    const event = write('p1');
    l.it.onWrite([event]);
    await new Promise((r) => setTimeout(r, 50));
    expect(l.attempts()).toBe(1);
    expect(l.it.oldestUnqueued()).toEqual(event.version.lastUpdated);
    const deadline = Date.now() + 5000;
    while (l.queued.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(l.attempts()).toBe(3);
    expect(l.queued.map((c) => c.id)).toEqual(['p1']);
    expect(l.it.oldestUnqueued()).toBeUndefined();
    expect(await l.it.drain()).toBe(true);
  });

  it('drain flushes the buffer, and reports changes it could not queue (left to crash recovery)', async () => {
    const ok = listener(0);
    ok.it.onWrite([write('p2')]);
    expect(await ok.it.drain()).toBe(true);
    expect(ok.queued.map((c) => c.id)).toEqual(['p2']);

    const failing = listener(Infinity);
    failing.it.onWrite([write('p3')]);
    expect(await failing.it.drain()).toBe(false);
    expect(failing.queued).toEqual([]);
  }, 15_000);
});
