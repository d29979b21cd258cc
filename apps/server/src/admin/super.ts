import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allOk, badRequest, fail, isValidId, notFoundWith } from '@hearth/core';
import type { AuthModule } from '../auth/module.js';
import { checkNewPassword, hashPassword } from '../auth/passwords.js';
import { normalizeEmail } from '../auth/projects.js';
import { findUserByEmail } from '../auth/store.js';
import { withTransaction } from '../platform/postgres.js';
import { isStoredResourceType, resourceTable, historyTable } from '../storage/tables.js';
import { lockForReindex } from '../storage/sql/versions.js';
import type { SearchIndexer, StoredVersion } from '../storage/types.js';
import { requireSuperAdmin } from './access.js';

export interface SuperAdminDeps {
  /** The write-time indexer (search and terminology), to rebuild index rows. */
  indexer: SearchIndexer;
  /** Applies pending database migrations; returns how many ran. */
  migrate(): Promise<number>;
}

const BATCH = 500;
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

/**
 * Rebuilds the index rows of every current resource of a type, a batch per transaction (keyset on
 * project and id). Each batch is read locked (lockForReindex), so an update committing meanwhile is
 * never overwritten by index rows of the content it replaced.
 */
async function reindex(auth: AuthModule, deps: SuperAdminDeps, resourceType: string): Promise<number> {
  const pool = auth.deps.pool;
  let count = 0;
  let after = { projectId: '00000000-0000-0000-0000-000000000000', id: '' };
  for (;;) {
    const rows = await withTransaction(pool, async (client) => {
      const batch = await lockForReindex(client, resourceType, after, BATCH);
      const versions: StoredVersion[] = batch.map((r) => ({
        resourceType,
        id: r.id,
        projectId: r.projectId,
        versionId: r.versionId,
        lastUpdated: r.lastUpdated,
        deleted: false,
        resource: JSON.parse(r.content),
        content: r.content,
        // The index writer reads the resource, not the stored compartments (which stay as they are).
        compartments: [],
      }));
      if (versions.length > 0) {
        await deps.indexer.index(client, versions);
      }
      return batch;
    });
    if (rows.length === 0) {
      return count;
    }
    count += rows.length;
    const last = rows[rows.length - 1];
    after = { projectId: last.projectId, id: last.id };
  }
}

/** Super admin endpoints (/admin/super/...): maintenance of the whole server. */
export async function superAdminRoutes(app: FastifyInstance, auth: AuthModule, deps: SuperAdminDeps): Promise<void> {
  const pool = auth.deps.pool;

  app.post('/admin/super/reindex', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const resourceType = resourceTypeOf(body(request));
    const count = await reindex(auth, deps, resourceType);
    return reply.send({
      ...allOk,
      issue: [
        { severity: 'information', code: 'informational', details: { text: `Reindexed ${count} ${resourceType}` } },
      ],
    });
  });

  // Value sets expand from the terminology tables, which the indexer fills: reindexing rebuilds them.
  app.post('/admin/super/valuesets', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    let count = 0;
    for (const type of ['CodeSystem', 'ValueSet', 'ConceptMap']) {
      count += await reindex(auth, deps, type);
    }
    return reply.send({
      ...allOk,
      issue: [
        {
          severity: 'information',
          code: 'informational',
          details: { text: `Rebuilt ${count} code systems, value sets and concept maps` },
        },
      ],
    });
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
      await deps.indexer.index(
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
    return reply.send({
      ...allOk,
      issue: [
        { severity: 'information', code: 'informational', details: { text: `Purged ${removed} ${resourceType}` } },
      ],
    });
  });

  app.post('/admin/super/migrate', async (request, reply) => {
    await requireSuperAdmin(auth, request);
    const applied = await deps.migrate();
    return reply.send({
      ...allOk,
      issue: [{ severity: 'information', code: 'informational', details: { text: `Applied ${applied} migrations` } }],
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
