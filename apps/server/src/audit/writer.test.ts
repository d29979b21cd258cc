/** The writer's batching: a flush writes what was buffered when it was asked for; later entries wait for a full batch or the next flush. */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../platform/logger.js';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { verifyChain } from './chain.js';
import { entryOfAccess } from './stored-entry.js';
import { AuditWriter, CLAIM_OUTBOX } from './writer.js';

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

function writerOf(batchSize: number, vacuumOutboxEvery?: number): AuditWriter {
  return new AuditWriter({
    pool,
    logger: createLogger('silent'),
    maxBuffered: 100_000,
    batchSize,
    flushIntervalMs: 60_000,
    vacuumOutboxEvery,
  });
}

function reads(projectId: string, n: number) {
  const info = { projectId, agent: { profile: 'Practitioner/w' }, requestId: 'writer-test' };
  return Array.from({ length: n }, () =>
    entryOfAccess(info, { interaction: 'read', action: 'R', patients: [], status: 200, recorded: new Date() }),
  );
}

/** The rows of each transaction that wrote the project's entries (a batch is one transaction). */
const batchSizes = async (projectId: string) =>
  (
    await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM audit_event WHERE project_id = $1 GROUP BY xmin::text ORDER BY min(seq)',
      [projectId],
    )
  ).rows.map((r) => r.n);

const stored = async (projectId: string) =>
  (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_event WHERE project_id = $1', [projectId]))
    .rows[0].n;

describe('the audit writer', () => {
  it('writes what was buffered when the flush was asked for; entries recorded during it wait for the next', async () => {
    const projectId = randomUUID();
    const writer = writerOf(1000);
    for (const entry of reads(projectId, 5)) writer.record(entry);
    const flushing = writer.flush();
    // The batch is on its way to the database: these come too late for it.
    await new Promise((resolve) => setImmediate(resolve));
    for (const entry of reads(projectId, 3)) writer.record(entry);
    await flushing;
    expect([await stored(projectId), writer.buffered]).toEqual([5, 3]);
    await writer.flush();
    expect([await batchSizes(projectId), writer.buffered]).toEqual([[5, 3], 0]);
    expect((await verifyChain(pool, projectId)).broken).toBeUndefined();
  });

  it('writes a full batch as soon as there is one, in batches of at most batchSize', async () => {
    const projectId = randomUUID();
    const writer = writerOf(100);
    for (const entry of reads(projectId, 250)) writer.record(entry);
    // No flush asked for: the full batch's own flush takes what is buffered when its turn comes.
    for (let i = 0; i < 100 && (await stored(projectId)) < 250; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect([await batchSizes(projectId), writer.buffered]).toEqual([[100, 100, 50], 0]);
    const report = await verifyChain(pool, projectId);
    expect([report.broken, report.checked]).toEqual([undefined, 250]);
  });

  it('vacuums the outbox it empties, so that claiming entries does not walk ever more dead rows', async () => {
    const projectId = randomUUID();
    const entries = reads(projectId, 300).map((e) => e.content);
    await pool.query('INSERT INTO audit_outbox (project_id, entry) SELECT $1, unnest($2::text[])', [
      projectId,
      entries,
    ]);
    const pages = async () =>
      (await pool.query<{ n: string }>(`SELECT pg_relation_size('audit_outbox') AS n`)).rows[0].n;
    expect(Number(await pages())).toBeGreaterThan(0);
    await writerOf(100, 200).flush();
    expect([await batchSizes(projectId), await stored(projectId)]).toEqual([[100, 100, 100], 300]);
    // VACUUM removed the moved rows and gave back the emptied pages.
    expect(await pages()).toBe('0');
  });

  it('claims outbox entries with one pass, whatever statistics the planner has', async () => {
    const projectId = randomUUID();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // The worst statistics: taken while the outbox was empty, then thousands of entries arrive.
      await client.query('DELETE FROM audit_outbox');
      await client.query('ANALYZE audit_outbox');
      const entries = reads(projectId, 3000).map((e) => e.content);
      await client.query('INSERT INTO audit_outbox (project_id, entry) SELECT $1, unnest($2::text[])', [
        projectId,
        entries,
      ]);
      const plan = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${CLAIM_OUTBOX}`, [1000])).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      expect(plan).toContain('InitPlan');
      expect(plan).not.toMatch(/Nested Loop|Join/);
      const claimed = await client.query(CLAIM_OUTBOX, [1000]);
      expect(claimed.rows.length).toBe(1000);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
