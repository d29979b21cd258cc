import type { Parameters } from '@hearth/core';
import type { Logger } from '../../platform/logger.js';
import { ConceptImporter, type ImportConcept, type ImportStats } from '../import/importer.js';
import type { CodeSystemRow } from '../resolve.js';
import type { TerminologyDeps } from './context.js';
import { out, parameters } from './params.js';

/** The answer of an import: what it wrote and how long it took. */
export function statsParameters(cs: CodeSystemRow, stats: ImportStats): Parameters {
  return parameters([
    out('system', 'Uri', cs.url),
    out('concepts', 'Integer', stats.concepts),
    out('parentLinks', 'Integer', stats.parentLinks),
    out('hierarchyPairs', 'Integer', stats.hierarchyPairs),
    out('skipped', 'Integer', stats.skipped),
    out('durationMs', 'Integer', stats.ms),
  ]);
}

/** Imports concepts into one code system in one transaction, one import per code system at a time. */
export async function importConcepts(
  deps: TerminologyDeps,
  cs: CodeSystemRow,
  concepts: AsyncIterable<ImportConcept> | Iterable<ImportConcept>,
  logger: Logger,
  onBatch?: (concepts: number) => Promise<void>,
): Promise<ImportStats> {
  const client = await deps.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL statement_timeout = 0');
    // One import at a time per code system; others wait rather than interleave.
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('hearth-terminology-import:' || $1, 0))`, [
      cs.id,
    ]);
    const importer = new ConceptImporter(client, cs, logger, onBatch);
    for await (const concept of concepts) {
      await importer.add(concept);
    }
    const stats = await importer.finish();
    await client.query('COMMIT');
    return stats;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
