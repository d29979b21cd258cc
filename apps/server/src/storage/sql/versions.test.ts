import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import type { Queryable } from '../../platform/postgres.js';
import {
  lockForReindex,
  replaceVersionParts,
  selectCurrent,
  selectCurrentForUpdate,
  selectCurrentMany,
  selectCurrentToWrite,
  selectHistory,
  selectVersion,
} from './versions.js';

/**
 * The statements that read one resource must seek its index entry, not walk the partition's
 * index: with the partition's indexes led by resource_type, a statement that omits the type has
 * an index condition on `id` alone, which PostgreSQL evaluates against every entry.
 */
let db: TestDatabase;
let pool: pg.Pool;
const project = randomUUID();
const ids: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // Enough rows that a walk and a seek differ, written as storage writes them (current + history).
  await pool.query(
    `INSERT INTO "Patient" (resource_type, id, project_id, version_id, last_updated, content)
     SELECT 'Patient', 'p' || g, $1, 3, now(), '{}' FROM generate_series(1, 3000) g`,
    [project],
  );
  await pool.query(
    `INSERT INTO "Patient_History" (resource_type, id, project_id, version_id, last_updated, content)
     SELECT 'Patient', 'p' || g, $1, v, now(), '{}' FROM generate_series(1, 3000) g, generate_series(1, 3) v`,
    [project],
  );
  await pool.query('ANALYZE "Patient"; ANALYZE "Patient_History"');
  ids.push('p42', 'p43');
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

interface PlanNode {
  'Node Type': string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
  'Relation Name'?: string;
}

function scans(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node['Relation Name']) out.push(node);
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

/** Runs `read` with a connection that answers every statement with its generic plan, and returns the plans' scans. */
async function plannedScans(read: (q: Queryable) => Promise<unknown>): Promise<PlanNode[]> {
  const client = await pool.connect();
  const found: PlanNode[] = [];
  try {
    // The generic plan is the one a prepared statement keeps after five runs: it must seek too.
    await client.query(
      'SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET enable_bitmapscan = off',
    );
    const explaining = {
      query: async (config: { text: string; values?: unknown[] }) => {
        const name = `x${randomUUID().replace(/-/g, '')}`;
        await client.query(`PREPARE ${name} AS ${config.text}`);
        const values = (config.values ?? []).map((v) =>
          client.escapeLiteral(Array.isArray(v) ? `{${v.join(',')}}` : String(v)),
        );
        const res = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (FORMAT JSON) EXECUTE ${name}${values.length ? `(${values.join(', ')})` : ''}`,
        );
        found.push(...scans(res.rows[0]['QUERY PLAN'][0].Plan));
        return { rows: [], rowCount: 0 };
      },
    } as unknown as pg.PoolClient;
    await read(explaining);
  } finally {
    await client.query('RESET ALL');
    client.release();
  }
  return found;
}

/**
 * Each scan of `table` is an index scan whose condition binds the index's leading columns:
 * the type and the id, and for history (keyed by type, project, id, version) the project too.
 */
function expectSeeks(found: PlanNode[], table: string): void {
  const onTable = found.filter((n) => n['Relation Name'] === table);
  expect(onTable.length).toBeGreaterThan(0);
  const leading = table.endsWith('_History')
    ? ['resource_type =', 'project_id =', 'id =']
    : ['resource_type =', 'id ='];
  for (const node of onTable) {
    expect(node['Node Type']).toMatch(/Index/);
    for (const column of leading) {
      expect(node['Index Cond'] ?? '').toContain(column);
    }
  }
}

describe('single-resource statements seek their partition index', () => {
  for (const projects of [undefined, [project]]) {
    const who = projects ? 'a project reader' : 'a reader of every project';
    it(`read, for ${who}`, async () => {
      expectSeeks(await plannedScans((q) => selectCurrent(q, 'Patient', 'p42', projects)), 'Patient');
    });
    it(`read of many, for ${who}`, async () => {
      expectSeeks(await plannedScans((q) => selectCurrentMany(q, 'Patient', ids, projects)), 'Patient');
    });
    it(`lock before an update, for ${who}`, async () => {
      expectSeeks(
        await plannedScans((q) => selectCurrentForUpdate(q as pg.PoolClient, 'Patient', 'p42', projects)),
        'Patient',
      );
    });
    it(`vread, for ${who}`, async () => {
      expectSeeks(await plannedScans((q) => selectVersion(q, 'Patient', 'p42', 2, projects)), 'Patient_History');
    });
    it(`instance history, for ${who}`, async () => {
      const found = await plannedScans((q) =>
        selectHistory(q, { resourceType: 'Patient', id: 'p42', projects, count: 20 }),
      );
      expectSeeks(found, 'Patient_History');
    });
  }

  it('finds the same rows as before: the id, in the readable projects only', async () => {
    expect((await selectCurrent(pool, 'Patient', 'p42', undefined))?.id).toBe('p42');
    expect(await selectCurrent(pool, 'Patient', 'p42', [randomUUID()])).toBeUndefined();
    expect((await selectVersion(pool, 'Patient', 'p42', 3, [project]))?.versionId).toBe(3);
    const history = await selectHistory(pool, { resourceType: 'Patient', id: 'p42', projects: undefined, count: 20 });
    expect(history.map((r) => r.versionId)).toEqual([3, 2, 1]);
  });
});

describe('one-statement update', () => {
  async function readToWrite(id: string) {
    const row = await selectCurrentToWrite(pool, 'Patient', id, [project], undefined, false);
    if (!row) throw new Error('missing');
    return row;
  }

  async function runUpdate(read: { versionId: number; rowVersion: string }, id: string): Promise<boolean> {
    const values: unknown[] = [];
    const param = (value: unknown, cast: string): string => `$${values.push(value)}::${cast}`;
    const version = {
      resourceType: 'Patient',
      id,
      projectId: project,
      versionId: read.versionId + 1,
      lastUpdated: new Date(),
      deleted: false,
      content: '{"resourceType":"Patient"}',
      compartments: [],
    };
    const { parts, written } = replaceVersionParts(version, read, param);
    const res = await pool.query<{ written: boolean }>(`WITH ${parts.join(', ')} SELECT ${written} AS written`, values);
    return res.rows[0].written;
  }

  it('writes the new version when the row is still the one read', async () => {
    const read = await readToWrite('p100');
    expect(await runUpdate(read, 'p100')).toBe(true);
    expect((await selectCurrent(pool, 'Patient', 'p100', [project]))?.versionId).toBe(4);
    const history = await selectHistory(pool, { resourceType: 'Patient', id: 'p100', projects: [project], count: 20 });
    expect(history.map((r) => r.versionId)).toEqual([4, 3, 2, 1]);
  });

  it('writes nothing when another write landed after the read', async () => {
    const read = await readToWrite('p101');
    expect(await runUpdate(read, 'p101')).toBe(true);
    expect(await runUpdate(read, 'p101')).toBe(false);
    expect((await selectCurrent(pool, 'Patient', 'p101', [project]))?.versionId).toBe(4);
  });

  it('writes nothing when a reindex rewrote the index rows after the read (same version, new row version)', async () => {
    const read = await readToWrite('p102');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const locked = await lockForReindex(client, 'Patient', { projectId: project, id: 'p1019' }, 1, project);
      expect(locked.map((r) => r.id)).toEqual(['p102']);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await runUpdate(read, 'p102')).toBe(false);
    expect(await runUpdate(await readToWrite('p102'), 'p102')).toBe(true);
  });
});

describe('type-level history pages', () => {
  const other = randomUUID();

  beforeAll(async () => {
    await pool.query(
      `INSERT INTO "Patient_History" (resource_type, id, project_id, version_id, last_updated, content)
       SELECT 'Patient', 'o' || g, $1, 1, now() + (g || ' seconds')::interval, '{}' FROM generate_series(1, 5) g`,
      [other],
    );
    await pool.query('ANALYZE "Patient_History"');
  });

  for (const count of [1, 2]) {
    it(`read each of ${count} readable project(s) in index order, not by sorting every version`, async () => {
      const projects = count === 1 ? [project] : [project, other];
      const found = await plannedScans((q) => selectHistory(q, { resourceType: 'Patient', projects, count: 20 }));
      const onHistory = found.filter((n) => n['Relation Name'] === 'Patient_History');
      expect(onHistory).toHaveLength(count);
      for (const node of onHistory) {
        expect(node['Node Type']).toMatch(/Index/);
        expect(node['Index Cond'] ?? '').toContain('project_id =');
        // `= ANY(...)` cannot be walked in order: the page would sort every version.
        expect(node['Index Cond'] ?? '').not.toContain('ANY');
      }
    });
  }

  it('merges the projects newest first, one page of the asked size', async () => {
    const rows = await selectHistory(pool, { resourceType: 'Patient', projects: [project, other], count: 3 });
    // The other project's five versions were written in the future: they come first, newest first.
    expect(rows.map((r) => r.id)).toEqual(['o5', 'o4', 'o3', 'o2']);
    expect(await selectHistory(pool, { resourceType: 'Patient', projects: [], count: 3 })).toEqual([]);
  });

  // More than eight readable projects, or all of them (a super admin): one page from each project.
  const many = () => [project, other, ...Array.from({ length: 9 }, () => randomUUID())];
  for (const [who, projects] of [
    ['nine or more readable projects', many],
    ['a super admin (every project)', () => undefined],
  ] as const) {
    it(`reads, for ${who}, each project's versions in index order and keeps the newest`, async () => {
      const found = await plannedScans((q) =>
        selectHistory(q, { resourceType: 'Patient', projects: projects(), count: 20 }),
      );
      const onHistory = found.filter((n) => n['Relation Name'] === 'Patient_History');
      expect(onHistory.length).toBeGreaterThan(0);
      for (const node of onHistory) {
        expect(node['Node Type']).toMatch(/Index/);
        expect(node['Index Cond'] ?? '').not.toContain('ANY');
      }
      // One scan reads a page per project, by equality; for all projects, the walk from one project
      // to the next starts with one probe (LIMIT 1) in project order.
      const byProject = onHistory.filter((n) => /project_id = /.test(n['Index Cond'] ?? ''));
      expect(byProject).toHaveLength(1);
      expect(onHistory.length - byProject.length).toBeLessThanOrEqual(projects() ? 0 : 1);

      const page = await selectHistory(pool, { resourceType: 'Patient', projects: projects(), count: 6 });
      expect(page.slice(0, 5).map((r) => r.id)).toEqual(['o5', 'o4', 'o3', 'o2', 'o1']);
      expect(page).toHaveLength(7);
      // The next page goes on from the cursor, across projects, in the same order.
      const last = page[5];
      const next = await selectHistory(pool, {
        resourceType: 'Patient',
        projects: projects(),
        count: 2,
        before: { lastUpdated: last.lastUpdated, resourceType: 'Patient', id: last.id, versionId: last.versionId },
      });
      const key = (r: { id: string; versionId: number; projectId: string }) => `${r.projectId}/${r.id}/${r.versionId}`;
      expect(key(next[0])).toBe(key(page[6]));
      expect(next).toHaveLength(3);
    });
  }

  it('reads system-level history (every type) of every project, newest first', async () => {
    const encounterProject = randomUUID();
    await pool.query(
      `INSERT INTO "Encounter_History" (resource_type, id, project_id, version_id, last_updated, content)
       VALUES ('Encounter', 'e1', $1, 1, now() + interval '1 hour', '{}')`,
      [encounterProject],
    );
    const rows = await selectHistory(pool, { projects: undefined, count: 3 });
    expect(rows.map((r) => `${r.resourceType}/${r.id}`)).toEqual([
      'Encounter/e1',
      'Patient/o5',
      'Patient/o4',
      'Patient/o3',
    ]);
    const readable = await selectHistory(pool, { projects: [...many(), encounterProject], count: 1 });
    expect(readable.map((r) => `${r.resourceType}/${r.id}`)).toEqual(['Encounter/e1', 'Patient/o5']);
  });
});
