import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allOk, badRequest, fail, isValidId, notFoundWith, type OperationOutcome } from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import { checkNewPassword, hashPassword } from '../auth/passwords.js';
import { normalizeEmail } from '../auth/projects.js';
import { findUserByEmail } from '../auth/store.js';
import { withTransaction } from '../platform/postgres.js';
import { isStoredResourceType, resourceTable, historyTable } from '../storage/tables.js';
import { migrations } from '../storage/migrations/index.js';
import type { SearchIndexer } from '../storage/types.js';
import type { AsyncJobs } from '../jobs/async-job.js';
import { reindexServer, SERVER_REINDEX, type ReindexReport, type ServerReindexParams } from '../jobs/reindex.js';
import { requireSuperAdmin } from './access.js';

export interface SuperAdminDeps {
  /** Rewrites every index row (search and terminology) of the versions given (services' `reindexer`). */
  reindexer: SearchIndexer;
  /** Where a reindex asked for with `Prefer: respond-async` runs (jobs/reindex.ts defines its kind). */
  asyncJobs: AsyncJobs;
  /** Applies pending database migrations; returns how many ran. */
  migrate(): Promise<number>;
}

const PURGEABLE = ['AuditEvent', 'Login'];

function body(request: FastifyRequest): Record<string, unknown> {
  const b = request.body;
  return b && typeof b === 'object' && !Array.isArray(b) && !Buffer.isBuffer(b) ? (b as Record<string, unknown>) : {};
}

function resourceTypeOf(b: Record<string, unknown>): string {
  const type = b.resourceType;
  if (typeof type !== 'string' || !isStoredResourceType(type)) {
    fail(badRequest('resourceType must be a stored resource type', 'resourceType'));
  }
  return type;
}

/** The types to reindex: `resourceType` as one type or a comma-separated list; absent or empty: all. */
function reindexTypesOf(b: Record<string, unknown>): string[] | undefined {
  const value = b.resourceType;
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') {
    fail(badRequest('resourceType must be a resource type or a comma-separated list of them', 'resourceType'));
  }
  const types = [...new Set(value.split(',').map((t) => t.trim()))].filter((t) => t);
  const unknown = types.filter((t) => !isStoredResourceType(t));
  if (unknown.length > 0) {
    fail(badRequest(`Not a stored resource type: ${unknown.join(', ')}`, 'resourceType'));
  }
  return types.length > 0 ? types : undefined;
}

/** "Reindexed 12 resources (Observation 10, Patient 2)". */
function reindexSummary(report: ReindexReport): string {
  const parts = report.types.map((t) => `${t.resourceType} ${t.count}`);
  return `Reindexed ${report.total} resources${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function informational(text: string): OperationOutcome {
  return { ...allOk, issue: [{ severity: 'information', code: 'informational', details: { text } }] };
}

/** True when the client asked for asynchronous processing (hl7.org/fhir/R4/async.html). */
function respondAsync(request: FastifyRequest): boolean {
  const prefer = request.headers.prefer;
  return (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? ''))
    .split(',')
    .some((p) => p.trim().toLowerCase() === 'respond-async');
}

/** Super admin endpoints (/admin/super/...): maintenance of the whole server. */
export async function superAdminRoutes(app: FastifyInstance, auth: AuthModule, deps: SuperAdminDeps): Promise<void> {
  const pool = auth.deps.pool;
  const reindexDeps = { pool, indexer: deps.reindexer };

  // Reindex: synchronous (200 with a summary), or with `Prefer: respond-async` an AsyncJob (202,
  // Content-Location: its status URL, which shows done / total resources while it runs).
  app.post('/admin/super/reindex', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const types = reindexTypesOf(body(request));
    if (respondAsync(request)) {
      const context = await auth.contextFor(request);
      const url = new URL(request.url, context.fhirBase).toString();
      const params: ServerReindexParams = types ? { types } : {};
      const result = await deps.asyncJobs.start({ url, context }, SERVER_REINDEX, params, 'reindex');
      return reply
        .code(result.status ?? 202)
        .headers(result.headers ?? {})
        .header('content-type', 'application/fhir+json')
        .send(JSON.stringify(result.json));
    }
    const report = await reindexServer(reindexDeps, types ? { types } : {});
    return reply.send(informational(reindexSummary(report)));
  });

  // Value sets expand from the terminology tables, which the indexer fills: reindexing rebuilds them.
  app.post('/admin/super/valuesets', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const report = await reindexServer(reindexDeps, { types: ['CodeSystem', 'ValueSet', 'ConceptMap'] });
    return reply.send(informational(`Rebuilt ${report.total} code systems, value sets and concept maps`));
  });

  app.post('/admin/super/setpassword', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const b = body(request);
    const email = normalizeEmail(b.email);
    const projectId = typeof b.projectId === 'string' && isValidId(b.projectId) ? b.projectId : undefined;
    const user = await findUserByEmail(pool, email, projectId);
    if (!user) {
      fail(notFoundWith('User not found'));
    }
    const passwordHash = await hashPassword(checkNewPassword(b.password));
    await auth.deps.systemRepo(user.meta?.project).updateResource({ ...user, passwordHash });
    return reply.send(allOk);
  });

  // Deletes old sign-in records and audit events for good (rows, history and index rows).
  app.post('/admin/super/purge', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const b = body(request);
    const resourceType = resourceTypeOf(b);
    if (!PURGEABLE.includes(resourceType)) {
      fail(badRequest(`Only ${PURGEABLE.join(' and ')} can be purged`, 'resourceType'));
    }
    const before = typeof b.before === 'string' ? new Date(b.before) : undefined;
    if (!before || Number.isNaN(before.getTime())) {
      fail(badRequest('before must be a date', 'before'));
    }
    const removed = await withTransaction(pool, async (client) => {
      const gone = await client.query<{ id: string; project_id: string; version_id: number; last_updated: Date }>(
        `DELETE FROM ${resourceTable(resourceType)} WHERE last_updated < $1 RETURNING id, project_id, version_id, last_updated`,
        [before],
      );
      await client.query(`DELETE FROM ${historyTable(resourceType)} WHERE last_updated < $1`, [before]);
      await deps.reindexer.index(
        client,
        gone.rows.map((r) => ({
          resourceType,
          id: r.id,
          projectId: r.project_id,
          versionId: r.version_id,
          lastUpdated: r.last_updated,
          deleted: true,
          content: '',
          compartments: [],
        })),
      );
      return gone.rowCount ?? 0;
    });
    return reply.send(informational(`Purged ${removed} ${resourceType}`));
  });

  app.post('/admin/super/migrate', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const applied = await deps.migrate();
    return reply.send(informational(`Applied ${applied} migrations`));
  });

  // Which migrations the database has, which this server version would still apply, and any the
  // database has that this version does not know (it was run by a newer version).
  app.get('/admin/super/migrate', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const { rows } = await pool.query<{ id: number; name: string; applied_at: Date }>(
      'SELECT id, name, applied_at FROM hearth_migration ORDER BY id',
    );
    const known = new Set(migrations.map((m) => m.id));
    const done = new Set(rows.map((r) => r.id));
    return reply.header('cache-control', 'no-store').send({
      applied: rows
        .filter((r) => known.has(r.id))
        .map((r) => ({ id: r.id, name: r.name, appliedAt: r.applied_at.toISOString() })),
      pending: [...migrations]
        .sort((a, b) => a.id - b.id)
        .filter((m) => !done.has(m.id))
        .map((m) => ({ id: m.id, name: m.name })),
      unknown: rows
        .filter((r) => !known.has(r.id))
        .map((r) => ({ id: r.id, name: r.name, appliedAt: r.applied_at.toISOString() })),
    });
  });

  app.get('/admin/super/stats', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const [types, migrations, database, connections] = await Promise.all([
      pool.query<{ resource_type: string; count: number }>(
        `SELECT resource_type, count(*)::int AS count FROM resource WHERE NOT deleted GROUP BY resource_type ORDER BY count DESC`,
      ),
      pool.query<{ id: number; name: string; applied_at: Date }>(
        'SELECT id, name, applied_at FROM hearth_migration ORDER BY id',
      ),
      pool.query<{ size: number }>('SELECT pg_database_size(current_database())::bigint AS size'),
      pool.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database()',
      ),
    ]);
    return reply.send({
      databaseBytes: database.rows[0].size,
      connections: connections.rows[0].count,
      pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
      resources: Object.fromEntries(types.rows.map((r) => [r.resource_type, r.count])),
      migrations: migrations.rows,
    });
  });

  app.get('/admin/super/projects', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const rows = await pool.query<{ content: string; members: number }>(
      `SELECT p.content, (SELECT count(*)::int FROM "ProjectMembership" m WHERE m.project_id = p.project_id AND NOT m.deleted) AS members
       FROM "Project" p WHERE NOT p.deleted ORDER BY p.last_updated`,
    );
    return reply.send(rows.rows.map((r) => ({ ...JSON.parse(r.content), memberCount: r.members })));
  });
}
