import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { ensurePartitions, partitionName, PARTITION_STATISTICS } from './partitions.js';

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const targetsOf = async (table: string): Promise<Record<string, number>> => {
  const { rows } = await pool.query<{ attname: string; attstattarget: number }>(
    `SELECT attname, attstattarget FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [table],
  );
  return Object.fromEntries(rows.map((r) => [r.attname, r.attstattarget]));
};

it('gives every partition, old and new, the light statistics targets, and ANALYZE keeps to them', async () => {
  expect(await targetsOf('audit_event')).toEqual(PARTITION_STATISTICS);
  await ensurePartitions(pool, ['203001', '203002']);
  for (const month of ['203001', '203002']) {
    expect(await targetsOf(partitionName(month))).toEqual(PARTITION_STATISTICS);
  }
  // Creating it again changes nothing.
  await ensurePartitions(pool, ['203001']);
  expect(await targetsOf(partitionName('203001'))).toEqual(PARTITION_STATISTICS);

  await pool.query(
    `INSERT INTO audit_event (project_id, seq, id, recorded, action, outcome, type_code, agent, entity, patient, content, prev_hash, hash)
     SELECT gen_random_uuid(), i, 'e' || i, '2030-01-15T00:00:00Z', 'R', '0', 'rest', ARRAY['Practitioner/a'],
            ARRAY['Patient/p' || (i % 50)], ARRAY['Patient/p' || (i % 50)], repeat('x', 500), '\\x00', '\\x00'
       FROM generate_series(1, 5000) i`,
  );
  await pool.query(`ANALYZE ${partitionName('203001')}`);
  const { rows } = await pool.query<{ attname: string }>(
    `SELECT attname FROM pg_stats WHERE tablename = $1 ORDER BY attname`,
    [partitionName('203001')],
  );
  // Statistics for what searches filter on; none for the content and the hashes.
  const analyzed = rows.map((r) => r.attname);
  expect(analyzed).toContain('entity');
  expect(analyzed).toContain('recorded');
  expect(analyzed).not.toContain('content');
  expect(analyzed).not.toContain('hash');
});
