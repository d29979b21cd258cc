import type { CodeSystem, ConceptMap, Resource, ValueSet } from '@hearth/core';
import type { PoolClient, Queryable } from '../platform/postgres.js';
import type { SearchIndexer, StoredVersion } from '../storage/types.js';
import { deleteTerminologyRows, writeCodeSystems } from './store/code-systems.js';
import { writeConceptMaps, writeValueSets } from './store/maps-and-value-sets.js';

export const TERMINOLOGY_RESOURCE_TYPES = ['CodeSystem', 'ValueSet', 'ConceptMap'] as const;
const TYPES = new Set<string>(TERMINOLOGY_RESOURCE_TYPES);

const TABLES = {
  CodeSystem: 'terminology_code_system',
  ValueSet: 'terminology_value_set',
  ConceptMap: 'terminology_concept_map',
} as const;

/**
 * Keeps the terminology tables in step with CodeSystem, ValueSet and ConceptMap writes, inside the
 * write's own transaction: a $expand right after a PUT sees the new concepts, and a failed write
 * leaves nothing behind. `globalProjects` hold the server-wide content (terminology, super admin).
 */
export async function indexTerminology(
  db: Queryable,
  versions: StoredVersion[],
  globalProjects: ReadonlySet<string>,
): Promise<void> {
  const relevant = versions.filter((v) => TYPES.has(v.resourceType));
  if (relevant.length === 0) {
    return;
  }
  for (const type of TERMINOLOGY_RESOURCE_TYPES) {
    const ofType = relevant.filter((v) => v.resourceType === type);
    const deleted = ofType.filter((v) => v.deleted || !v.resource);
    await deleteTerminologyRows(
      db,
      TABLES[type],
      deleted.map((v) => ({ projectId: v.projectId, resourceId: v.id })),
    );
    const live = ofType
      .filter((v) => !v.deleted && v.resource)
      .map((v) => ({
        projectId: v.projectId,
        resourceId: v.id,
        global: globalProjects.has(v.projectId),
        resource: v.resource as Resource,
      }));
    if (type === 'CodeSystem') {
      await writeCodeSystems(
        db,
        live.map((i) => ({ ...i, resource: i.resource as unknown as CodeSystem })),
      );
    } else if (type === 'ValueSet') {
      await writeValueSets(
        db,
        live.map((i) => ({ ...i, resource: i.resource as unknown as ValueSet })),
      );
    } else {
      await writeConceptMaps(
        db,
        live.map((i) => ({ ...i, resource: i.resource as unknown as ConceptMap })),
      );
    }
  }
}

/**
 * Wraps the search indexer so that terminology rows are written in the same transaction.
 * `onGlobalWrite` hears of writes to global terminology (to drop cached expansions).
 */
export function withTerminologyIndexing(
  inner: SearchIndexer,
  globalProjects: ReadonlySet<string>,
  onGlobalWrite: () => void = () => undefined,
): SearchIndexer {
  return {
    compartmentsOf: (resource) => inner.compartmentsOf(resource),
    // A one-statement create carries only search rows: terminology resources take the indexing path.
    newResourceParts: inner.newResourceParts
      ? async (db, versions, param) =>
          versions.some((v) => TYPES.has(v.resourceType)) ? undefined : inner.newResourceParts?.(db, versions, param)
      : undefined,
    replacedResourceParts: inner.replacedResourceParts
      ? async (db, version, param, guard) =>
          TYPES.has(version.resourceType) ? undefined : inner.replacedResourceParts?.(db, version, param, guard)
      : undefined,
    copyRows: inner.copyRows
      ? async (client, versions) =>
          !versions.some((v) => TYPES.has(v.resourceType)) && ((await inner.copyRows?.(client, versions)) ?? false)
      : undefined,
    async index(client: PoolClient, versions: StoredVersion[]): Promise<void> {
      await inner.index(client, versions);
      await indexTerminology(client, versions, globalProjects);
      if (versions.some((v) => globalProjects.has(v.projectId) && TYPES.has(v.resourceType))) {
        onGlobalWrite();
      }
    },
  };
}
