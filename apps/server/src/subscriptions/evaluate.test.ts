import { describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createLogger } from '../platform/logger.js';
import { evaluateChanges, type EvaluatorDeps, type QueuedDelivery } from './evaluate.js';
import { parseSubscription, type ActiveSubscription, type ChangeEvent } from './model.js';

const PROJECT = '00000000-0000-4000-8000-000000000001';

function sub(id: string, criteria: string, channel: string): ActiveSubscription {
  const parsed = parseSubscription({
    resourceType: 'Subscription',
    id,
    meta: { project: PROJECT },
    status: 'active',
    criteria,
    channel: { type: channel, endpoint: channel === 'email' ? 'mailto:a@example.org' : 'https://example.org/hook' },
  } as unknown as Resource);
  if (!parsed) {
    throw new Error('not a subscription');
  }
  return parsed;
}

function change(id: string): ChangeEvent {
  return {
    projectId: PROJECT,
    resourceType: 'Device',
    id,
    versionId: 1,
    interaction: 'create',
    content: JSON.stringify({ resourceType: 'Device', id, manufacturer: 'acme' }),
  };
}

/** An evaluator whose search matches the ids in `matching`, recording every search it is asked. */
function evaluator(subs: ActiveSubscription[], matching: Set<string>) {
  const searches: { query: string; limit: number }[] = [];
  const queued: unknown[] = [];
  const inline: QueuedDelivery[] = [];
  const deps = {
    active: { forType: async () => subs },
    pretest: { mayMatch: async () => true },
    db: {},
    matcher: {
      findIds: async (_db: unknown, _scope: unknown, _type: string, query: string, limit: number) => {
        searches.push({ query, limit });
        const ids = new URLSearchParams(query).getAll('_id').at(-1)?.split(',') ?? [];
        return ids.filter((id) => matching.has(id));
      },
    },
    jobs: {
      sendMany: async (_queue: string, items: unknown[]) => {
        queued.push(...items);
      },
    },
    systemRepo: () => ({}),
    defaultMaxAttempts: 3,
    logger: createLogger('silent'),
    deliverFirst: async (deliveries: QueuedDelivery[]) => {
      inline.push(...deliveries);
    },
  } as unknown as EvaluatorDeps;
  return { deps, searches, queued, inline };
}

describe('evaluateChanges', () => {
  it('searches each criteria once for all the changes of a job, and fires on the matches only', async () => {
    const e = evaluator([sub('s1', 'Device?manufacturer=acme', 'rest-hook')], new Set(['d1', 'd3']));
    const fired = await evaluateChanges(e.deps, { changes: [change('d1'), change('d2'), change('d3')] });
    expect(fired).toBe(2);
    expect(e.searches).toEqual([{ query: 'manufacturer=acme&_id=d1,d2,d3', limit: 3 }]);
    expect(e.inline.map((d) => d.data.id).sort()).toEqual(['d1', 'd3']);
    expect(e.inline[0].options.retryLimit).toBe(2);
  });

  it('makes the first attempt of rest-hooks inline and queues the other channels as jobs', async () => {
    const e = evaluator(
      [sub('hook', 'Device?manufacturer=acme', 'rest-hook'), sub('mail', 'Device?manufacturer=acme', 'email')],
      new Set(['d1']),
    );
    await evaluateChanges(e.deps, { changes: [change('d1')] });
    expect(e.inline.map((d) => d.sub.id)).toEqual(['hook']);
    expect(e.queued).toEqual([
      { data: expect.objectContaining({ subscriptionId: 'mail', id: 'd1' }), options: { retryLimit: 2 } },
    ]);
  });

  it('fails the evaluation (to run again) when the criteria search loses its connection, but not when the criteria are at fault', async () => {
    const failing = (err: Error) => {
      const e = evaluator([sub('s1', 'Device?manufacturer=acme', 'rest-hook')], new Set(['d1']));
      (e.deps.matcher as unknown as { findIds: () => Promise<string[]> }).findIds = () => Promise.reject(err);
      return e;
    };
    const lost = failing(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    );
    await expect(evaluateChanges(lost.deps, { changes: [change('d1')] })).rejects.toThrow('administrator command');
    expect(lost.inline).toEqual([]);

    const invalid = failing(new Error('Unknown search parameter'));
    expect(await evaluateChanges(invalid.deps, { changes: [change('d1')] })).toBe(0);
  });
});
