// The scope's access guard (scope.access, built by auth/access) applied to storage: its row conditions
// go into the SQL of every read and write, hidden fields are removed from what is served, and
// server-owned fields are kept on what is written.
import { fail, forbiddenWith, type Resource } from '@hearth/core';
import type { PoolClient } from '../platform/postgres.js';
import { parseStored } from './serialize.js';
import { selectCurrentMany, type CurrentRow, type RowCondition } from './sql/versions.js';
import type { AccessInteraction, ReadResult, RepositoryScope, StoredVersion } from './types.js';

/** Asserts the interaction and returns the row condition of the scope's access guard, if any. */
export function visibleTo(
  scope: RepositoryScope,
  resourceType: string,
  interaction: AccessInteraction,
): RowCondition | undefined {
  const guard = scope.access;
  if (!guard) {
    return undefined;
  }
  guard.assertInteraction(resourceType, interaction);
  return (alias, param) => guard.readCondition(resourceType, interaction, alias, param);
}

export function writableBy(scope: RepositoryScope, resourceType: string): RowCondition | undefined {
  const guard = scope.access;
  return guard ? (alias, param) => guard.writeCondition(resourceType, alias, param) : undefined;
}

/** A read result as the scope may see it (hidden fields removed). */
export function shown<T extends ReadResult>(scope: RepositoryScope, result: T, resourceType: string): T {
  const guard = scope.access;
  if (!guard?.hidesFields(resourceType)) {
    return result;
  }
  const resource = guard.redact(result.resource);
  return { ...result, resource, content: JSON.stringify(resource) };
}

/**
 * Applies the access guard to a resource about to be written over `previous` (none: a create):
 * the interaction must be granted; server-owned, read-only and hidden fields are kept.
 */
export function guardedInput<T extends Resource>(
  scope: RepositoryScope,
  resource: T,
  previous: CurrentRow | undefined,
): T {
  const guard = scope.access;
  if (!guard) {
    return resource;
  }
  const existing = previous && !previous.deleted ? parseStored(previous.content) : undefined;
  guard.assertInteraction(resource.resourceType, existing ? 'update' : 'create');
  return guard.prepareWrite(resource, existing) as T;
}

/** Whether a row written in `projectId` must be read back against the access policy's write condition. */
export function needsWriteCheck(scope: RepositoryScope, resourceType: string, projectId: string): boolean {
  return scope.access?.writeCheckNeeded(resourceType, projectId) ?? false;
}

/** Each written row must meet the write condition as stored (index rows included), before COMMIT. */
export async function verifyWritten(
  scope: RepositoryScope,
  client: PoolClient,
  versions: StoredVersion[],
): Promise<void> {
  if (!scope.access) {
    return;
  }
  // One query per type and project, not per row: a transaction Bundle writes hundreds at once.
  const groups = new Map<string, StoredVersion[]>();
  for (const v of versions) {
    if (v.deleted || !needsWriteCheck(scope, v.resourceType, v.projectId)) {
      continue;
    }
    const key = `${v.resourceType}|${v.projectId}`;
    const group = groups.get(key);
    if (group) {
      group.push(v);
    } else {
      groups.set(key, [v]);
    }
  }
  for (const group of groups.values()) {
    const { resourceType, projectId } = group[0];
    const rows = await selectCurrentMany(
      client,
      resourceType,
      group.map((v) => v.id),
      [projectId],
      writableBy(scope, resourceType),
    );
    const found = new Set(rows.map((r) => r.id));
    if (group.some((v) => !found.has(v.id))) {
      fail(forbiddenWith(`The ${resourceType} as written would be outside what this access policy allows`));
    }
  }
}
