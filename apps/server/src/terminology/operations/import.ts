// Code system import: Parameters chunks, or a streamed NDJSON / CSV / TSV body (see terminology/README.md).
import type { Readable } from 'node:stream';
import {
  badRequest,
  fail,
  forbiddenWith,
  notFoundWith,
  unsupportedMediaType,
  type Parameters,
  type ParametersParameter,
} from '@hearth/core';
import { CODE_SYSTEM_IMPORT } from '../../operations/definitions/hearth.js';
import type { FhirContext } from '../../operations/context.js';
import { prefersAsync } from '../../operations/input.js';
import type { OperationRegistration } from '../../operations/registry.js';
import { jsonResult } from '../../operations/result.js';
import type { Queryable } from '../../platform/postgres.js';
import type { ImportConcept } from '../import/importer.js';
import { startAsyncImport } from './import-async.js';
import { importConcepts, statsParameters } from './import-run.js';
import { delimitedConcepts, ndjsonConcepts, parametersConcepts } from '../import/sources.js';
import { findCodeSystem, findCodeSystemById, type CodeSystemRow } from '../resolve.js';
import { ownProjectOf, type TerminologyDeps } from './context.js';

/** Bodies that reach $import as a stream, never buffered whole. */
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

/** The first value of a query parameter, unless empty. */
function first(query: URLSearchParams, name: string): string | undefined {
  return query.get(name) || undefined;
}

export function importOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: CODE_SYSTEM_IMPORT,
    streamedTypes: STREAMED_IMPORT_TYPES,
    async handler(input) {
      const { query, body, context, target } = input;
      let system = first(query, 'system');
      let source: ConceptSource | undefined;
      let list: ParametersParameter[] | undefined;
      if (isStream(body)) {
        source = conceptSource(input.headers['content-type'] ?? '', query);
      } else if ((body as Parameters | undefined)?.resourceType === 'Parameters') {
        list = ((body as Parameters).parameter ?? []) as ParametersParameter[];
        system ??= list.find((p) => p.name === 'system')?.valueUri;
      } else {
        fail(
          unsupportedMediaType(
            `$import takes a Parameters resource, or NDJSON / CSV / TSV (${STREAMED_IMPORT_TYPES.join(', ')})`,
          ),
        );
      }
      const cs = await ownCodeSystem(deps, context, target.id, system);
      await assertMayUpdate(deps.pool, context.repo.scope, cs);
      const logger = deps.logger.child({ reqId: context.requestId });
      if (source && isStream(body) && prefersAsync(input)) {
        return startAsyncImport(deps, input, cs, body, source, logger);
      }
      let skipped = 0;
      const concepts = source && isStream(body) ? source(body, () => skipped++) : parametersConcepts(list ?? []);
      const stats = await importConcepts(deps, cs, concepts, logger);
      return jsonResult(statsParameters(cs, { ...stats, skipped: stats.skipped + skipped }));
    },
  };
}

/** The target code system, which must belong to the caller's own project. */
async function ownCodeSystem(
  deps: TerminologyDeps,
  context: FhirContext,
  id: string | undefined,
  system: string | undefined,
): Promise<CodeSystemRow> {
  const own = ownProjectOf(context);
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

/** Reads concepts from a streamed body; calls onSkip for each line it cannot use. */
type ConceptSource = (body: Readable, onSkip: () => void) => AsyncIterable<ImportConcept>;

/**
 * The reader of a streamed body of this content type, with its options from the query string
 * checked now (a bad `where` is a 400 before anything is read or queued).
 */
function conceptSource(contentType: string, query: URLSearchParams): ConceptSource {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type.endsWith('ndjson')) {
    return (body) => ndjsonConcepts(body);
  }
  const where = query.getAll('where').map((text) => {
    const eq = text.indexOf('=');
    if (eq <= 0) {
      fail(badRequest(`where must be column=value, not "${text}"`, 'where'));
    }
    return { column: text.slice(0, eq), value: text.slice(eq + 1) };
  });
  const tsv = type === 'text/tab-separated-values';
  const options = {
    delimiter: first(query, 'delimiter') ?? (tsv ? '\t' : ','),
    quoted: !tsv,
    codeColumn: first(query, 'codeColumn') ?? 'code',
    displayColumn: first(query, 'displayColumn') ?? 'display',
    definitionColumn: first(query, 'definitionColumn') ?? 'definition',
    parentColumn: first(query, 'parentColumn') ?? 'parent',
    where,
    propertyColumns: first(query, 'propertyColumns')?.split(','),
  };
  return (body, onSkip) => delimitedConcepts(body, options, onSkip);
}
