import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../platform/postgres.js';
import { RELOAD_AFTER_MS, SearchParamRegistry } from './project-params.js';

/** A database whose "SearchParameter" table holds `stored` (mutable), counting reads. */
function fakeDb(stored: object[]): { db: Queryable; reads: () => number } {
  let reads = 0;
  const db = {
    query: async () => {
      reads++;
      return { rows: stored.map((sp) => ({ content: JSON.stringify(sp) })) };
    },
  } as unknown as Queryable;
  return { db, reads: () => reads };
}

const param = (code: string) => ({
  resourceType: 'SearchParameter',
  url: `http://example.org/SearchParameter/${code}`,
  status: 'active',
  code,
  base: ['Patient'],
  type: 'string',
  expression: `Patient.extension('http://example.org/${code}').value`,
});

describe('SearchParamRegistry', () => {
  it("re-reads a project's parameters once they are older than RELOAD_AFTER_MS (written by another process)", async () => {
    const stored = [param('nickname')];
    const { db, reads } = fakeDb(stored);
    const registry = new SearchParamRegistry();
    await registry.ensure(db, 'p1', 1_000);
    expect(registry.get('Patient', 'nickname', 'p1')?.type).toBe('string');
    // Another process adds one: not seen while the cache is fresh...
    stored.push(param('shoe-size'));
    await registry.ensure(db, 'p1', 1_000 + RELOAD_AFTER_MS - 1);
    expect(reads()).toBe(1);
    expect(registry.get('Patient', 'shoe-size', 'p1')).toBeUndefined();
    // ...and seen once it is stale.
    await registry.ensure(db, 'p1', 1_000 + RELOAD_AFTER_MS);
    expect(reads()).toBe(2);
    expect(registry.get('Patient', 'shoe-size', 'p1')?.type).toBe('string');
    // Deleted elsewhere: gone after the next reload, and other projects never had it.
    stored.length = 0;
    await registry.ensure(db, 'p1', 1_000 + 2 * RELOAD_AFTER_MS);
    expect(registry.get('Patient', 'nickname', 'p1')).toBeUndefined();
    expect(registry.get('Patient', 'name', 'p1')?.type).toBe('string');
    expect(registry.get('Patient', 'nickname', 'p2')).toBeUndefined();
  });
});

describe('SearchParamRegistry.forget', () => {
  it('makes the next use read again, also when it came while a read was under way', async () => {
    const stored = [param('nickname')];
    const { db, reads } = fakeDb(stored);
    const registry = new SearchParamRegistry(3_600_000);
    await registry.ensure(db, 'p1');
    // Another process adds one and says so: read again at once, within the max age.
    stored.push(param('shoe-size'));
    registry.forget('p1');
    await registry.ensure(db, 'p1');
    expect(reads()).toBe(2);
    expect(registry.get('Patient', 'shoe-size', 'p1')?.type).toBe('string');
    // A notice heard while a read is in flight: that read may predate the change, so it is not trusted.
    const slow = {
      query: async (...args: unknown[]) => {
        registry.forget('p1');
        return (db.query as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    } as unknown as Queryable;
    await registry.ensure(slow, 'p1', Date.now() + 3_600_000);
    await registry.ensure(db, 'p1');
    expect(reads()).toBe(4);
    await registry.ensure(db, 'p1');
    expect(reads()).toBe(4);
  });
});
