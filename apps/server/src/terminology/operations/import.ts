// Code system import: Parameters chunks, or a streamed NDJSON / CSV / TSV body (see terminology/README.md).
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import {
  badRequest,
  fail,
  forbiddenWith,
  notFoundWith,
  unsupportedMediaType,
  type Parameters,
  type ParametersParameter,
} from '@hearth/core';
import { ctx } from '../../fhir/context.js';
import type { OperationDefinitionEntry } from '../../fhir/operations/registry.js';
import type { Queryable } from '../../platform/postgres.js';
import { sendJson } from '../../http/fhir-reply.js';
import { ConceptImporter, type ImportConcept } from '../import/importer.js';
import { delimitedConcepts, ndjsonConcepts, parametersConcepts } from '../import/sources.js';
import { findCodeSystem, findCodeSystemById, type CodeSystemRow } from '../resolve.js';
import { ownProjectOf, type TerminologyDeps } from './context.js';
import { out, parameters } from './params.js';

/** Bodies that reach $import as a stream (see the terminology routes), never buffered whole. */
export const STREAMED_IMPORT_TYPES = [
  'application/x-ndjson',
  'application/ndjson',
  'application/fhir+ndjson',
  'text/csv',
  'text/tab-separated-values',
];

function isStream(body: unknown): body is Readable {
  return typeof (body as Readable | undefined)?.pipe === 'function' && typeof (body as Readable).on === 'function';
}

function first(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function importOperation(deps: TerminologyDeps): OperationDefinitionEntry {
  return {
    name: 'import',
    levels: ['type', 'instance'],
    resourceTypes: ['CodeSystem'],
    methods: ['POST'],
    async handler(request, reply, target) {
      const query = request.query as Record<string, unknown>;
      const body = request.body;
      let system = first(query.system);
      let concepts: AsyncIterable<ImportConcept> | Iterable<ImportConcept>;
      let skipped = 0;
      if (isStream(body)) {
        concepts = streamedConcepts(request, body, query, () => skipped++);
      } else if ((body as Parameters | undefined)?.resourceType === 'Parameters') {
        const list = ((body as Parameters).parameter ?? []) as ParametersParameter[];
        system ??= list.find((p) => p.name === 'system')?.valueUri;
        concepts = parametersConcepts(list);
      } else {
        fail(
          unsupportedMediaType(
            `$import takes a Parameters resource, or NDJSON / CSV / TSV (${STREAMED_IMPORT_TYPES.join(', ')})`,
          ),
        );
      }
      const cs = await ownCodeSystem(deps, request, target.id, system);
      await assertMayUpdate(deps.pool, ctx(request).repo.scope, cs);

      const client = await deps.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL statement_timeout = 0');
        // One import at a time per code system; others wait rather than interleave.
        await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('hearth-terminology-import:' || $1, 0))`, [
          cs.id,
        ]);
        const importer = new ConceptImporter(client, cs, deps.logger.child({ reqId: request.id }));
        for await (const concept of concepts) {
          await importer.add(concept);
        }
        const stats = await importer.finish();
        await client.query('COMMIT');
        return sendJson(
          reply,
          200,
          parameters([
            out('system', 'Uri', cs.url),
            out('concepts', 'Integer', stats.concepts),
            out('parentLinks', 'Integer', stats.parentLinks),
            out('hierarchyPairs', 'Integer', stats.hierarchyPairs),
            out('skipped', 'Integer', stats.skipped + skipped),
            out('durationMs', 'Integer', stats.ms),
          ]),
        );
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  };
}

/** The target code system, which must belong to the caller's own project. */
async function ownCodeSystem(
  deps: TerminologyDeps,
  request: FastifyRequest,
  id: string | undefined,
  system: string | undefined,
): Promise<CodeSystemRow> {
  const own = ownProjectOf(request);
  const scope = { projects: [own] };
  let cs: CodeSystemRow | undefined;
  if (id) {
    cs = await findCodeSystemById(deps.pool, scope, id);
  } else if (system) {
    cs = await findCodeSystem(deps.pool, scope, system);
  } else {
    fail(badRequest('$import needs the system (a parameter, or ?system=) or a CodeSystem id', 'system'));
  }
  if (!cs || cs.projectId !== own) {
    fail(
      notFoundWith(
        `No CodeSystem ${id ?? system} in this project: create it first (content "not-present" for a large external system), then import its concepts`,
      ),
    );
  }
  return cs;
}

/** The part of the access guard (storage/types.ts, built by auth) an import needs. */
interface WriteGuard {
  assertInteraction(resourceType: string, interaction: 'update'): void;
  writeCondition(resourceType: string, alias: string, param: (value: unknown) => string): string | undefined;
}

/**
 * Importing concepts changes a CodeSystem, so the caller needs the right to update that resource:
 * the interaction, and the row condition of its access policy (e.g. a read-only or
 * criteria-limited CodeSystem grant refuses the import with 403).
 */
async function assertMayUpdate(db: Queryable, scope: object, cs: CodeSystemRow): Promise<void> {
  const guard = (scope as { access?: WriteGuard }).access;
  if (!guard) {
    return;
  }
  guard.assertInteraction('CodeSystem', 'update');
  const params: unknown[] = [cs.projectId, cs.resourceId];
  const condition = guard.writeCondition('CodeSystem', 'r', (value) => {
    params.push(value);
    return `$${params.length}`;
  });
  if (!condition) {
    return;
  }
  const row = await db.query(
    `SELECT 1 FROM resource r WHERE r.resource_type = 'CodeSystem' AND r.project_id = $1 AND r.id = $2
       AND NOT r.deleted AND (${condition})`,
    params,
  );
  if (!row.rowCount) {
    fail(forbiddenWith(`Not allowed to import concepts into CodeSystem/${cs.resourceId}`));
  }
}

function streamedConcepts(
  request: FastifyRequest,
  body: Readable,
  query: Record<string, unknown>,
  onSkip: () => void,
): AsyncIterable<ImportConcept> {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type.endsWith('ndjson')) {
    return ndjsonConcepts(body);
  }
  const where = (Array.isArray(query.where) ? query.where : query.where === undefined ? [] : [query.where]).map((w) => {
    const text = String(w);
    const eq = text.indexOf('=');
    if (eq <= 0) {
      fail(badRequest(`where must be column=value, not "${text}"`, 'where'));
    }
    return { column: text.slice(0, eq), value: text.slice(eq + 1) };
  });
  const tsv = type === 'text/tab-separated-values';
  return delimitedConcepts(
    body,
    {
      delimiter: first(query.delimiter) ?? (tsv ? '\t' : ','),
      quoted: !tsv,
      codeColumn: first(query.codeColumn) ?? 'code',
      displayColumn: first(query.displayColumn) ?? 'display',
      definitionColumn: first(query.definitionColumn) ?? 'definition',
      parentColumn: first(query.parentColumn) ?? 'parent',
      where,
      propertyColumns: first(query.propertyColumns)?.split(','),
    },
    onSkip,
  );
}
