import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateId, type Resource } from '@hearth/core';
import { PLATFORM_TERMINOLOGY, r4DefinitionsDir } from '@hearth/definitions';
import type { Logger } from '../platform/logger.js';
import { MEDICATIONS_TERMINOLOGY } from './content/medications.js';
import type { Pool, PoolClient } from '../platform/postgres.js';
import { Repository } from '../storage/repository.js';
import { buildStoredVersion } from '../storage/serialize.js';
import { writeVersions } from '../storage/sql/versions.js';
import { getSetting } from '../storage/settings.js';
import type { RepositoryDeps, StoredVersion } from '../storage/types.js';
import { LAB_TESTS_TERMINOLOGY } from './content/lab-tests.js';

/** The R4 definition files holding terminology (hl7.org/fhir/R4/downloads.html), read as data. */
export const R4_TERMINOLOGY_FILES = ['valuesets.json', 'v2-tables.json', 'v3-codesystems.json', 'conceptmaps.json'];
/** hearth_setting key of the project that holds the server-wide terminology. */
export const TERMINOLOGY_PROJECT_KEY = 'terminologyProjectId';
/** Any constant shared by every Hearth process; distinct from the migration lock. */
const LOAD_LOCK_KEY = 7_246_013_400;
/** Bytes of resource JSON per multi-row statement. */
const BATCH_BYTES = 4 * 1024 * 1024;
const TYPES = new Set(['CodeSystem', 'ValueSet', 'ConceptMap']);

interface TerminologyBundle {
  entry?: { resource?: Resource }[];
}

/**
 * The server-wide content, each part loaded once and marked by its own hearth_setting key: a
 * database loaded before a part existed gets that part at its next start.
 */
const CONTENT: { key: string; bundles: () => Iterable<TerminologyBundle> }[] = [
  {
    key: 'terminology.r4.loaded',
    // One file parsed at a time, each dropped once loaded: all four at once (22 MB of JSON) made
    // the first start the server's memory peak (about 340 MB against 175 MB for a later start).
    bundles: function* () {
      const dir = r4DefinitionsDir();
      for (const file of R4_TERMINOLOGY_FILES) {
        yield JSON.parse(readFileSync(join(dir, file), 'utf8')) as TerminologyBundle;
      }
    },
  },
  // The platform's own code systems and value sets (Project.features, ClientApplication.status,
  // …), so that their required bindings can be expanded like R4's.
  { key: 'terminology.platform.loaded', bundles: () => [PLATFORM_TERMINOLOGY as TerminologyBundle] },
  { key: 'terminology.lab-tests.loaded', bundles: () => [LAB_TESTS_TERMINOLOGY as TerminologyBundle] },
  // RxNorm prescribable drugs, their ingredients and allergen classes (content/medications.ts).
  { key: 'terminology.medications.loaded', bundles: () => [MEDICATIONS_TERMINOLOGY as TerminologyBundle] },
];

function* bundlesOf(parts: typeof CONTENT): Iterable<TerminologyBundle> {
  for (const part of parts) {
    yield* part.bundles();
  }
}

export interface LoadResult {
  /** The project holding the server-wide terminology. */
  projectId: string;
  /** False when another process (or an earlier start) had already loaded the content. */
  loaded: boolean;
  resources: number;
  concepts: number;
  ms: number;
}

/**
 * Loads the R4 spec's CodeSystems, ValueSets and ConceptMaps (and the platform's) once per database, at first start, as
 * resources of a project of their own (the terminology project: nothing else lives there, so every
 * project can be given read access to it) indexed into the terminology tables. Several processes
 * starting together take turns on an advisory lock; the first creates the project and loads in
 * one transaction and records it, the others find it done. Multi-row statements keep this short.
 */
export async function loadR4Terminology(
  pool: Pool,
  deps: RepositoryDeps,
  logger: Logger,
  onProject: (projectId: string) => void = () => undefined,
): Promise<LoadResult> {
  const started = Date.now();
  const missing = async (db: Pool | PoolClient): Promise<typeof CONTENT> => {
    const marked = await db.query<{ key: string }>('SELECT key FROM hearth_setting WHERE key = ANY($1)', [
      CONTENT.map((part) => part.key),
    ]);
    const keys = new Set(marked.rows.map((row) => row.key));
    return CONTENT.filter((part) => !keys.has(part.key));
  };
  const done = async (db: Pool | PoolClient): Promise<LoadResult | undefined> => {
    const projectId = await getSetting(db, TERMINOLOGY_PROJECT_KEY);
    const parts = await missing(db);
    return projectId && parts.length === 0
      ? { projectId, loaded: false, resources: 0, concepts: 0, ms: Date.now() - started }
      : undefined;
  };
  const before = await done(pool);
  if (before) {
    onProject(before.projectId);
    return before;
  }
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOAD_LOCK_KEY]);
    try {
      const again = await done(client);
      if (again) {
        onProject(again.projectId);
        return again;
      }
      await client.query('BEGIN');
      try {
        await client.query('SET LOCAL statement_timeout = 0');
        const existing = await getSetting(client, TERMINOLOGY_PROJECT_KEY);
        const projectId = existing ?? generateId();
        onProject(projectId);
        if (!existing) {
          await new Repository(deps, { projectId, readProjects: [projectId], system: true }, client).updateResource({
            resourceType: 'Project',
            id: projectId,
            name: 'Terminology',
            description:
              'Server-wide CodeSystems, ValueSets and ConceptMaps (the FHIR R4 specification), readable by every project',
          });
        }
        const parts = await missing(client);
        const counts = await loadBundles(client, deps, projectId, bundlesOf(parts));
        const now = new Date().toISOString();
        await client.query(
          `INSERT INTO hearth_setting (key, value) SELECT * FROM unnest($1::text[], $2::text[])
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [
            [TERMINOLOGY_PROJECT_KEY, ...parts.map((part) => part.key)],
            [projectId, ...parts.map(() => now)],
          ],
        );
        await client.query('COMMIT');
        const result = { projectId, loaded: true, ...counts, ms: Date.now() - started };
        logger.info({ ...result, parts: parts.map((part) => part.key) }, 'loaded the R4 terminology');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [LOAD_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}

async function loadBundles(
  client: PoolClient,
  deps: RepositoryDeps,
  projectId: string,
  bundles: Iterable<TerminologyBundle>,
): Promise<{ resources: number; concepts: number }> {
  const lastUpdated = new Date();
  let resources = 0;
  let batch: StoredVersion[] = [];
  let batchBytes = 0;
  const flush = async (): Promise<void> => {
    if (batch.length > 0) {
      const written = await writeVersions(client, batch);
      // A resource a user already created under the same id in this project is left as it is.
      const fresh = batch.filter((v) => written.has(`${v.resourceType}/${v.projectId}/${v.id}`));
      await deps.indexer.index(client, fresh);
      resources += fresh.length;
    }
    batch = [];
    batchBytes = 0;
  };
  for (const bundle of bundles) {
    for (const entry of bundle.entry ?? []) {
      const resource = entry.resource;
      if (!resource || !TYPES.has(resource.resourceType) || typeof resource.id !== 'string') {
        continue;
      }
      // The generated XHTML narrative is over half of these files and repeats the data beside it;
      // leaving it out halves the load (narrative is optional: R4 narrative.html).
      const { text: _narrative, ...content } = resource;
      const version = buildStoredVersion({
        resource: content as Resource,
        id: resource.id,
        projectId,
        versionId: 1,
        lastUpdated,
        compartments: (r) => deps.indexer.compartmentsOf(r),
      });
      batch.push(version);
      batchBytes += version.content.length;
      if (batchBytes >= BATCH_BYTES) {
        await flush();
      }
    }
  }
  await flush();
  const concepts = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM terminology_concept c JOIN terminology_code_system s ON s.id = c.code_system_id
     WHERE s.project_id = $1`,
    [projectId],
  );
  return { resources, concepts: concepts.rows[0].n };
}
