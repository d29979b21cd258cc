import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../platform/postgres.js';
import type { SearchParamRegistry } from '../registry/project-params.js';
import { QueryContext } from './context.js';
import { estimateMatches } from './execute.js';
import type { CompiledSearch } from './plan.js';

/** A database that answers EXPLAIN with `planRows` and any count with `count`, recording the SQL. */
function fakeDb(planRows: number, count: number): { db: Queryable; sql: string[] } {
  const sql: string[] = [];
  const db = {
    query: async (text: string) => {
      sql.push(text);
      return text.startsWith('EXPLAIN')
        ? { rows: [{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': planRows } }] }] }
        : { rows: [{ n: count }] };
    },
  } as unknown as Queryable;
  return { db, sql };
}

const search = { from: '"Observation"', where: ['r.deleted = false'] } as unknown as CompiledSearch;
const ctx = () => new QueryContext({} as SearchParamRegistry, 'p', undefined, '', false);

describe('_total=estimate', () => {
  it("uses the planner's estimate when it is large, without counting", async () => {
    const { db, sql } = fakeDb(250_000, 0);
    expect(await estimateMatches(db, ctx(), search)).toBe(250_000);
    expect(sql).toHaveLength(1);
  });
  it('counts small estimates, but never past the bound', async () => {
    const exact = fakeDb(12, 37);
    expect(await estimateMatches(exact.db, ctx(), search)).toBe(37);
    expect(exact.sql[1]).toMatch(/LIMIT 1000\) m$/);
    // The planner said 12, the bounded count hit its limit: at least 1000.
    const capped = fakeDb(12, 1000);
    expect(await estimateMatches(capped.db, ctx(), search)).toBe(1000);
  });
});
