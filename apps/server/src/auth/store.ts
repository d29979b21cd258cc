import type { Resource } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { parseStored } from '../storage/serialize.js';
import { isStoredResourceType, resourceTable } from '../storage/tables.js';
import type { DomainConfiguration, Login, ProjectMembership, User } from './types.js';

/**
 * Direct lookups of platform resources for the sign-in path, served by the expression indexes of
 * migration 200. Reads only current, non-deleted rows; writes always go through a Repository.
 */
const JSON_CONTENT = "nullif(content, '')::jsonb";

async function many<T extends Resource>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  const result = await db.query<{ content: string }>(sql, params);
  return result.rows.map((r) => parseStored(r.content) as T);
}

/**
 * Users with this email (case-insensitive): the project-scoped user of `projectId` when there is
 * one, else the server-scoped user. A project's own users shadow server users of the same email.
 */
export async function findUserByEmail(db: Queryable, email: string, projectId?: string): Promise<User | undefined> {
  const users = await many<User>(
    db,
    `SELECT content FROM "User" WHERE lower(${JSON_CONTENT}->>'email') = lower($1) AND NOT deleted`,
    [email.trim()],
  );
  if (projectId) {
    const scoped = users.find((u) => u.project?.reference === `Project/${projectId}`);
    if (scoped) {
      return scoped;
    }
  }
  return users.find((u) => !u.project);
}

/** Every user with this email, server-scoped or in any project (for SCIM and admin lookups). */
export async function findUsersByEmail(db: Queryable, email: string): Promise<User[]> {
  return many<User>(
    db,
    `SELECT content FROM "User" WHERE lower(${JSON_CONTENT}->>'email') = lower($1) AND NOT deleted`,
    [email.trim()],
  );
}

/** The memberships of a user (or bot, or client) reference, optionally in one project. */
export async function findMembershipsOfUser(
  db: Queryable,
  userReference: string,
  projectId?: string,
): Promise<ProjectMembership[]> {
  const params: unknown[] = [userReference];
  let sql = `SELECT content FROM "ProjectMembership" WHERE ${JSON_CONTENT}->'user'->>'reference' = $1 AND NOT deleted`;
  if (projectId) {
    params.push(projectId);
    sql += ' AND project_id = $2::uuid';
  }
  return many<ProjectMembership>(db, sql + ' ORDER BY last_updated', params);
}

/** The membership whose profile is this reference, in a project. */
export async function findMembershipByProfile(
  db: Queryable,
  profileReference: string,
  projectId: string,
): Promise<ProjectMembership | undefined> {
  const rows = await many<ProjectMembership>(
    db,
    `SELECT content FROM "ProjectMembership"
     WHERE ${JSON_CONTENT}->'profile'->>'reference' = $1 AND project_id = $2::uuid AND NOT deleted LIMIT 1`,
    [profileReference, projectId],
  );
  return rows[0];
}

/** Every membership of a project (admin pages). */
export async function findProjectMemberships(db: Queryable, projectId: string): Promise<ProjectMembership[]> {
  return many<ProjectMembership>(
    db,
    `SELECT content FROM "ProjectMembership" WHERE project_id = $1::uuid AND NOT deleted ORDER BY last_updated`,
    [projectId],
  );
}

export async function findLoginByCode(db: Queryable, code: string): Promise<Login | undefined> {
  const rows = await many<Login>(
    db,
    `SELECT content FROM "Login" WHERE ${JSON_CONTENT}->>'code' = $1 AND NOT deleted LIMIT 1`,
    [code],
  );
  return rows[0];
}

export async function findDomainConfiguration(db: Queryable, domain: string): Promise<DomainConfiguration | undefined> {
  const rows = await many<DomainConfiguration>(
    db,
    `SELECT content FROM "DomainConfiguration" WHERE lower(${JSON_CONTENT}->>'domain') = lower($1) AND NOT deleted LIMIT 1`,
    [domain],
  );
  return rows[0];
}

/** Reads current resources by "Type/id" references in any project, in one query per type. */
export async function readByReference<T extends Resource>(
  db: Queryable,
  reference: string | undefined,
): Promise<T | undefined> {
  if (!reference) {
    return undefined;
  }
  const [type, id] = reference.split('/');
  if (!type || !id || !/^[A-Za-z]+$/.test(type)) {
    return undefined;
  }
  const rows = await many<T>(
    db,
    'SELECT content FROM resource WHERE resource_type = $1 AND id = $2 AND NOT deleted LIMIT 1',
    [type, id],
  );
  return rows[0];
}

/**
 * Reads current resources for several "Type/id" references in one query; missing ones are absent.
 * One branch per type, each on its own partition: a test of (type, id) pairs against the parent
 * table cannot be pruned, and PostgreSQL then planned every partition (10 ms of planning per call,
 * on each session a token resolves).
 */
export async function readManyByReference(
  db: Queryable,
  references: (string | undefined)[],
): Promise<Map<string, Resource>> {
  const idsByType = new Map<string, string[]>();
  for (const ref of references) {
    const [type, id] = (ref ?? '').split('/');
    if (type && id && isStoredResourceType(type)) {
      idsByType.set(type, [...(idsByType.get(type) ?? []), id]);
    }
  }
  const out = new Map<string, Resource>();
  if (idsByType.size === 0) {
    return out;
  }
  const values: unknown[] = [];
  const branches = [...idsByType].map(([type, ids]) => {
    values.push(type, ids);
    const t = values.length - 1;
    return `SELECT resource_type, id, content FROM ${resourceTable(type)}
      WHERE resource_type = $${t} AND id = ANY($${t + 1}::text[]) AND NOT deleted`;
  });
  const result = await db.query<{ resource_type: string; id: string; content: string }>(
    branches.join(' UNION ALL '),
    values,
  );
  for (const row of result.rows) {
    out.set(`${row.resource_type}/${row.id}`, parseStored(row.content));
  }
  return out;
}
