// Conditional interactions decided by how many resources a condition matches: none, one or several.
// Unit tests over a fake repository and matcher; fhir/interactions/rest.test.ts and bundle.test.ts
// run the same rules against PostgreSQL.
import { describe, expect, it } from 'vitest';
import { OperationOutcomeError, type Resource } from '@hearth/core';
import type { Pool, PoolClient, Queryable } from '../platform/postgres.js';
import {
  conditionalDelete,
  conditionalUpdate,
  createIfNoneExist,
  existingMatch,
  findMatches,
  singleMatch,
  updateTarget,
  type ConditionalStore,
} from './conditional.js';
import { StorageContext } from './context.js';
import type { ReadResult, RepositoryDeps, WriteResult } from './types.js';

const WHEN = new Date('2026-01-01T00:00:00Z');

function written(resource: Resource, created: boolean): WriteResult {
  return { resource, content: JSON.stringify(resource), versionId: 1, lastUpdated: WHEN, created };
}

/** A repository whose condition matches `matches`; it records what it is asked to do. */
class FakeStore implements ConditionalStore {
  readonly calls: string[] = [];
  constructor(private readonly matches: string[]) {}

  async withTransaction<T>(fn: (tx: this) => Promise<T>): Promise<T> {
    this.calls.push('begin');
    const result = await fn(this);
    this.calls.push('commit');
    return result;
  }
  async findMatches(resourceType: string, query: string, limit: number): Promise<string[]> {
    this.calls.push(`find ${resourceType}?${query} limit ${limit}`);
    return this.matches.slice(0, limit);
  }
  async readResource<T extends Resource = Resource>(
    resourceType: string,
    id: string,
  ): Promise<ReadResult & { resource: T }> {
    this.calls.push(`read ${resourceType}/${id}`);
    const resource = { resourceType, id } as T;
    return { resource, content: JSON.stringify(resource), versionId: 3, lastUpdated: WHEN };
  }
  async createResource<T extends Resource>(resource: T): Promise<WriteResult & { resource: T }> {
    this.calls.push(`create ${resource.resourceType}`);
    return written({ ...resource, id: 'new' }, true) as WriteResult & { resource: T };
  }
  async updateResource<T extends Resource>(resource: T): Promise<WriteResult & { resource: T }> {
    this.calls.push(`update ${resource.resourceType}/${resource.id as string}`);
    return written(resource, false) as WriteResult & { resource: T };
  }
  async deleteResource(resourceType: string, id: string): Promise<void> {
    this.calls.push(`delete ${resourceType}/${id}`);
  }
}

/** The status of the error a promise rejects with. */
async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OperationOutcomeError) {
      return err.status;
    }
    throw err;
  }
  throw new Error('expected a rejection');
}

const patient: Resource = { resourceType: 'Patient' };

describe('create with If-None-Exist', () => {
  it('creates when nothing matches', async () => {
    const store = new FakeStore([]);
    const result = await createIfNoneExist(store, patient, 'identifier=a|1');
    expect(result.created).toBe(true);
    expect(store.calls).toEqual(['begin', 'find Patient?identifier=a|1 limit 2', 'create Patient', 'commit']);
  });

  it('answers with the one match, unchanged', async () => {
    const store = new FakeStore(['p1']);
    const result = await createIfNoneExist(store, patient, 'identifier=a|1');
    expect(result).toMatchObject({ created: false, versionId: 3, resource: { id: 'p1' } });
    expect(store.calls).toEqual(['begin', 'find Patient?identifier=a|1 limit 2', 'read Patient/p1', 'commit']);
  });

  it('refuses several matches with 412, naming the condition as the client wrote it', async () => {
    const store = new FakeStore(['p1', 'p2']);
    expect(await statusOf(createIfNoneExist(store, patient, 'identifier=a|1'))).toBe(412);
    expect(store.calls.some((c) => c.startsWith('create') || c.startsWith('read'))).toBe(false);
    await expect(existingMatch(store, 'Patient', 'identifier=a|1', 'ifNoneExist')).rejects.toThrow(
      'ifNoneExist matched 2 or more Patient resources',
    );
  });
});

describe('conditional update', () => {
  it('creates when nothing matches and the body has no id', async () => {
    const store = new FakeStore([]);
    expect((await conditionalUpdate(store, patient, 'name=x')).created).toBe(true);
    expect(store.calls).toContain('create Patient');
  });

  it("writes the body's own id when nothing matches", async () => {
    const store = new FakeStore([]);
    await conditionalUpdate(store, { ...patient, id: 'mine' }, 'name=x');
    expect(store.calls).toContain('update Patient/mine');
  });

  it('updates the one match, with or without its id in the body', async () => {
    for (const body of [patient, { ...patient, id: 'p1' }]) {
      const store = new FakeStore(['p1']);
      await conditionalUpdate(store, body, 'name=x');
      expect(store.calls).toEqual(['begin', 'find Patient?name=x limit 2', 'update Patient/p1', 'commit']);
    }
  });

  it('refuses a body naming another id than the match with 400', async () => {
    const store = new FakeStore(['p1']);
    expect(await statusOf(conditionalUpdate(store, { ...patient, id: 'other' }, 'name=x'))).toBe(400);
    expect(store.calls.some((c) => c.startsWith('update'))).toBe(false);
  });

  it('refuses several matches with 412', async () => {
    const store = new FakeStore(['p1', 'p2']);
    expect(await statusOf(conditionalUpdate(store, patient, 'name=x'))).toBe(412);
    expect(await statusOf(updateTarget(store, 'Patient', 'name=x', undefined))).toBe(412);
  });

  it('leaves a new id to the caller when nothing matches (transaction Bundles assign it up front)', async () => {
    expect(await updateTarget(new FakeStore([]), 'Patient', 'name=x', undefined)).toBeUndefined();
    expect(await updateTarget(new FakeStore([]), 'Patient', 'name=x', 'mine')).toBe('mine');
    expect(await updateTarget(new FakeStore(['p1']), 'Patient', 'name=x', undefined)).toBe('p1');
  });
});

describe('conditional delete', () => {
  it('deletes nothing when nothing matches', async () => {
    const store = new FakeStore([]);
    expect(await conditionalDelete(store, 'Patient', 'name=x', 3)).toBe(0);
    expect(store.calls).toEqual(['begin', 'find Patient?name=x limit 4', 'commit']);
  });

  it('deletes the one match, and every match up to the limit', async () => {
    const one = new FakeStore(['p1']);
    expect(await conditionalDelete(one, 'Patient', 'name=x', 3)).toBe(1);
    expect(one.calls).toContain('delete Patient/p1');
    const several = new FakeStore(['p1', 'p2', 'p3']);
    expect(await conditionalDelete(several, 'Patient', 'name=x', 3)).toBe(3);
    expect(several.calls.filter((c) => c.startsWith('delete'))).toHaveLength(3);
  });

  it('refuses more matches than the limit with 412, deleting none', async () => {
    const store = new FakeStore(['p1', 'p2', 'p3', 'p4']);
    expect(await statusOf(conditionalDelete(store, 'Patient', 'name=x', 3))).toBe(412);
    expect(store.calls.some((c) => c.startsWith('delete'))).toBe(false);
  });
});

/** A storage context whose matcher finds `ids`; it records every statement and where it ran. */
function contextMatching(ids: string[], inTransaction: boolean) {
  const statements: string[] = [];
  const recorder = (where: string): Queryable =>
    ({
      query: async (text: string, values?: unknown[]) => {
        statements.push(`${where}: ${text} ${JSON.stringify(values)}`);
        return { rows: [], rowCount: 0 };
      },
    }) as unknown as Queryable;
  const deps = {
    pool: recorder('pool') as Pool,
    matcher: {
      findIds: async (db: Queryable, _scope: unknown, type: string, query: string, limit: number) => {
        await db.query(`find ${type}?${query} limit ${limit}`);
        return ids.slice(0, limit);
      },
    },
  } as unknown as RepositoryDeps;
  const client = inTransaction ? (recorder('client') as PoolClient) : undefined;
  return { ctx: new StorageContext(deps, { projectId: 'proj' }, client), statements };
}

describe('finding the matches of a condition', () => {
  it('locks the condition inside a transaction, its parameters in any order, before searching', async () => {
    const { ctx, statements } = contextMatching(['p1'], true);
    expect(await findMatches(ctx, 'Patient', 'b=2&a=1&', 2)).toEqual(['p1']);
    expect(statements).toEqual([
      'client: SELECT pg_advisory_xact_lock(hashtextextended($1, 0)) ["proj|Patient|a=1&b=2"]',
      'client: find Patient?b=2&a=1& limit 2 undefined',
    ]);
  });

  it('takes no lock outside a transaction (there is no COMMIT to hold it until)', async () => {
    const { ctx, statements } = contextMatching([], false);
    expect(await findMatches(ctx, 'Patient', 'a=1', 2)).toEqual([]);
    expect(statements).toEqual(['pool: find Patient?a=1 limit 2 undefined']);
  });
});

describe('the one match of a condition (conditional patch, conditional references)', () => {
  it('is 404 for none, the id for one, 412 for several, and never locks', async () => {
    const none = contextMatching([], true);
    expect(await statusOf(singleMatch(none.ctx, 'Patient', 'a=1'))).toBe(404);
    const one = contextMatching(['p1'], true);
    expect(await singleMatch(one.ctx, 'Patient', 'a=1')).toBe('p1');
    const several = contextMatching(['p1', 'p2'], true);
    expect(await statusOf(singleMatch(several.ctx, 'Patient', 'a=1'))).toBe(412);
    for (const { statements } of [none, one, several]) {
      expect(statements.some((s) => s.includes('pg_advisory_xact_lock'))).toBe(false);
    }
  });
});
