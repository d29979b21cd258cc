// kill -9 of the built server right after acknowledged writes: their audit entries were written
// with the writes (the outbox), so a new process on the same database moves every one of them to
// the trail, chained, although the old process never flushed anything.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { storedEvent } from './stored-entry.js';
import {
  buildServerBundle,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from '../test/process.js';

const ADMIN = { email: 'audit-crash@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  bundle = await buildServerBundle('audit-crash');
  db = await createTestDatabase();
  cleanups.push(() => db.drop());
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  cleanups.push(() => pool.end());
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

async function start(): Promise<{ server: ServerProcess; headers: Record<string, string> }> {
  const server = await startServerProcess(
    (bundle as ServerBundle).main,
    {
      DATABASE_URL: db.url,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      // The process never flushes on its own before it is killed: only the outbox can save entries.
      HEARTH_AUDIT_FLUSH_MS: '600000',
    },
    cleanups,
  );
  const token = await signInOverHttp(server.baseUrl, ADMIN);
  return { server, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' } };
}

async function send(
  server: ServerProcess,
  headers: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${server.baseUrl}fhir/R4/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    json: (await res.json()) as { id?: string; entry?: { response: { location: string } }[] },
  };
}

describe('kill -9 after acknowledged writes', () => {
  it('loses no acknowledged write’s audit entry', async () => {
    let { server, headers } = await start();
    onTestFailed(() => console.log(`server output:\n${server.output()}`));
    const acknowledged: string[] = [];
    const writes = Array.from({ length: 40 }, (_, i) =>
      send(server, headers, 'POST', 'Patient', { resourceType: 'Patient', name: [{ family: `Crash${i}` }] }).then(
        (r) => {
          expect(r.status).toBe(201);
          acknowledged.push(`Patient/${r.json.id}`);
          return r.json.id as string;
        },
      ),
    );
    const ids = await Promise.all(writes);
    const updates = ids.slice(0, 10).map((id) =>
      send(server, headers, 'PUT', `Patient/${id}`, { resourceType: 'Patient', id, active: true }).then((r) => {
        expect(r.status).toBe(200);
      }),
    );
    const tx = send(server, headers, 'POST', '', {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [0, 1, 2].map(() => ({
        request: { method: 'POST', url: 'Observation' },
        resource: { resourceType: 'Observation', status: 'final', code: { text: 'x' } },
      })),
    }).then((r) => {
      expect(r.status).toBe(200);
      for (const e of r.json.entry ?? []) acknowledged.push(e.response.location.split('/_history')[0]);
    });
    await Promise.all([...updates, tx]);
    server.proc.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');

    // Nothing reached the trail yet; every acknowledged write's entry waits in the outbox.
    const moved = await pool.query(
      "SELECT count(*)::int AS n FROM audit_event WHERE type_code = 'rest' AND action = 'C'",
    );
    expect(moved.rows[0].n).toBe(0);
    const waiting = await pool.query<{ project_id: string; entry: string }>(
      'SELECT project_id, entry FROM audit_outbox',
    );
    const outboxRefs = new Set(
      waiting.rows.flatMap((r) => (storedEvent(r.project_id, r.entry).entity ?? []).map((e) => e.what?.reference)),
    );
    const inOutbox = (ref: string) => outboxRefs.has(ref);
    expect(acknowledged.filter((ref) => !inOutbox(ref))).toEqual([]);

    // A new process moves them to the trail, chained.
    ({ server, headers } = await start());
    const me = (await (await fetch(`${server.baseUrl}auth/me`, { headers })).json()) as { project: { id: string } };
    const projectId = me.project.id as string;
    let trail: { action: string; ref: string }[] = [];
    for (let i = 0; i < 100; i++) {
      const rows = await pool.query<{ action: string; entity: string[] }>(
        'SELECT action, entity FROM audit_event WHERE project_id = $1',
        [projectId],
      );
      trail = rows.rows.flatMap((r) => r.entity.map((ref) => ({ action: r.action.trim(), ref })));
      if (acknowledged.every((ref) => trail.some((e) => e.ref === ref && e.action === 'C'))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(acknowledged.filter((ref) => !trail.some((e) => e.ref === ref && e.action === 'C'))).toEqual([]);
    for (const id of ids.slice(0, 10)) {
      expect(trail.some((e) => e.ref === `Patient/${id}` && e.action === 'U')).toBe(true);
    }
    const verify = await fetch(`${server.baseUrl}fhir/R4/Project/${projectId}/$verify-audit`, { headers });
    const report = (await verify.json()) as { parameter: { name: string; valueBoolean?: boolean }[] };
    expect(report.parameter.find((p) => p.name === 'intact')?.valueBoolean).toBe(true);
    server.proc.kill('SIGTERM');
    await server.exited;
  }, 300_000);
});
