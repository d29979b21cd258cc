/**
 * Upgrading Hearth (docs/self-hosting/database-upgrade.md): a database as an earlier release left
 * it, migrated only up to migration 103 (before the distinct string values of 104, the quantity
 * base units of 120, the auth lookups, job queue, agent hub, terminology tables and audit trail)
 * and holding data written in that format, with the current server started on it: the remaining
 * migrations run at start, and the data reads back, found by search, `:contains` included (104
 * lists the stored values); the upgraded database takes new writes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../apps/server/src/platform/postgres.js';
import { normalizeString } from '../../apps/server/src/search/values/strings.js';
import { migrations } from '../../apps/server/src/storage/migrations/index.js';
import { runMigrations } from '../../apps/server/src/storage/migrations/runner.js';
import { createTestDatabase, type TestDatabase } from '../../apps/server/src/test/db.js';
import {
  buildServerBundle,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
} from '../../apps/server/src/test/process.js';

/** The last migration of the "previous release". */
const PREVIOUS = 103;
const ADMIN = { email: 'upgrade-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle;
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  bundle = await buildServerBundle('upgrade');
  cleanups.push(() => bundle.remove());
  db = await createTestDatabase({ empty: true });
  cleanups.push(() => db.drop());
  pool = createPool({ connectionString: db.url, max: 2, statementTimeoutMs: 0 });
  cleanups.push(() => pool.end());
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function appliedIds(): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>('SELECT id FROM hearth_migration ORDER BY id');
  return rows.map((r) => r.id);
}

/** A Patient as the format at migration 103 stores it: its current and history rows, and its name rows. */
async function writeOldPatient(projectId: string, id: string, family: string, given: string): Promise<void> {
  const lastUpdated = new Date('2025-01-02T03:04:05.000Z');
  const content = JSON.stringify({
    resourceType: 'Patient',
    id,
    meta: { versionId: '1', lastUpdated: lastUpdated.toISOString(), project: projectId },
    name: [{ family, given: [given] }],
  });
  await pool.query(
    `INSERT INTO resource (resource_type, id, project_id, version_id, last_updated, content, compartments)
     VALUES ('Patient', $1, $2, 1, $3, $4, $5)`,
    [id, projectId, lastUpdated, content, [`Patient/${id}`]],
  );
  await pool.query(
    `INSERT INTO resource_history (resource_type, id, project_id, version_id, last_updated, content)
     VALUES ('Patient', $1, $2, 1, $3, $4)`,
    [id, projectId, lastUpdated, content],
  );
  for (const [code, text] of [
    ['family', family],
    ['given', given],
    ['name', family],
    ['name', given],
  ]) {
    await pool.query(
      `INSERT INTO search_string (resource_type, resource_id, project_id, code, value, raw)
       VALUES ('Patient', $1, $2, $3, $4, $5)`,
      [id, projectId, code, normalizeString(text), text],
    );
  }
}

describe('upgrading a database of an earlier release', () => {
  it('refuses to stop at a migration that does not exist', async () => {
    await expect(runMigrations(pool, undefined, migrations, { upTo: 104.5 })).rejects.toThrow(
      'no migration has id 104.5',
    );
  });

  it('runs the remaining migrations at start, and the data written before reads back and is found', async () => {
    await runMigrations(pool, undefined, migrations, { upTo: PREVIOUS });
    expect(await appliedIds()).toEqual(migrations.filter((m) => m.id <= PREVIOUS).map((m) => m.id));

    const projectId = randomUUID();
    const id = randomUUID();
    const family = `Oldformat${randomBytes(3).toString('hex')}`;
    await writeOldPatient(projectId, id, family, 'Grace');

    const server = await startServerProcess(
      bundle.main,
      { DATABASE_URL: db.url, HEARTH_ADMIN_EMAIL: ADMIN.email, HEARTH_ADMIN_PASSWORD: ADMIN.password },
      cleanups,
    );
    expect(await appliedIds()).toEqual(migrations.map((m) => m.id).sort((a, b) => a - b));

    const token = await signInOverHttp(server.baseUrl, ADMIN);
    const get = (path: string) =>
      fetch(`${server.baseUrl}fhir/R4/${path}`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as Record<string, unknown> & { entry?: { resource: { id: string } }[] },
      }));
    const read = await get(`Patient/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, name: [{ family, given: ['Grace'] }], meta: { versionId: '1' } });
    expect((await get(`Patient?family=${family}`)).body.entry?.map((e) => e.resource.id)).toEqual([id]);
    // :contains reads search_string_text, which migration 104 filled from the rows written before it.
    const middle = family.slice(3, 9).toLowerCase();
    expect((await get(`Patient?family:contains=${middle}`)).body.entry?.map((e) => e.resource.id)).toEqual([id]);

    // The upgraded database takes new versions of old resources.
    const updated = await fetch(`${server.baseUrl}fhir/R4/Patient/${id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Patient', id, name: [{ family, given: ['Grace', 'Brewster'] }] }),
    });
    expect(updated.status).toBe(200);
    expect((await get(`Patient/${id}/_history`)).body.entry).toHaveLength(2);
    expect((await get(`Patient?given=brewster&family=${family}`)).body.entry?.map((e) => e.resource.id)).toEqual([id]);
  }, 600_000);
});
