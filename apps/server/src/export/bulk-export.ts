// Bulk Data export (hl7.org/fhir/uv/bulkdata/export.html): [base]/$export, Patient/$export and
// Group/{id}/$export. The kick-off answers 202 with the status URL of an AsyncJob (jobs/async-job.ts);
// the job pages through the search service as the requester (their access policy applies) and
// writes one NDJSON Binary per type (more when a type outgrows the Binary size limit), and one of
// OperationOutcomes for what it could not export (the manifest's `error` files).
import { Readable } from 'node:stream';
import { badRequest, fail, forbiddenWith, type Resource } from '@hearth/core';
import { GROUP_EXPORT, PATIENT_EXPORT, SYSTEM_EXPORT } from '../operations/definitions/implementation-guides.js';
import { prefersAsync } from '../operations/input.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { OperationInput } from '../operations/types.js';
import { withStorageKey } from '../storage/binary-key.js';
import type { AsyncJobContext, AsyncJobs } from '../jobs/async-job.js';
import { compartmentMemberTypes } from '../search/compartments.js';
import { resourceTypes } from '../search/resource-types.js';
import { searchResources } from '../search/resources.js';
import type { SearchService } from '../search/service.js';
import type { BinaryStore } from '../storage/binary-store.js';
import { Repository } from '../storage/repository.js';
import type { RepositoryDeps } from '../storage/types.js';
import { operationParams, searchableTypes, sinceValue, typeList } from './everything.js';
import { ExportProblems } from './export-problems.js';
import { groupMembers, MEMBER_CHUNK } from './group-members.js';

export const EXPORT_KIND = 'bulk-export';
export const NDJSON = 'application/fhir+ndjson';
const OUTPUT_FORMATS = ['application/fhir+ndjson', 'application/ndjson', 'ndjson'];
/** Types a system export leaves out unless _type names them. */
const NOT_BY_DEFAULT = ['Binary', 'AsyncJob'];
/** Resources per search page while exporting (the search maximum). */
const PAGE_SIZE = 1000;
/** Pages between two looks at whether the client cancelled. */
const CANCEL_CHECK_PAGES = 10;

export interface ExportParams {
  level: 'system' | 'patient' | 'group';
  groupId?: string;
  types: string[];
  /** Types named in `_type` that the requester may not search: left out, and reported. */
  typesNotAllowed?: string[];
  since?: string;
  /** _typeFilter: per type, the search queries whose union is exported (no entry: all of the type). */
  typeFilters?: Record<string, string[]>;
  fhirBase: string;
  /** AuditEvents come from the access audit trail (a project admin's system export). */
  auditTrail?: boolean;
}

export interface ExportOutput {
  type: string;
  url: string;
  count: number;
}

export interface BulkExportDeps {
  asyncJobs: AsyncJobs;
  search: SearchService;
  binaryStore: BinaryStore;
  repositoryDeps: RepositoryDeps;
  /** The access audit trail (audit/): a project admin's system export carries its entries as AuditEvents. */
  trail?: {
    /** True when the caller may export the trail of their project. */
    exports(input: OperationInput): boolean;
    /** The project's entries, oldest first, recorded after `since` when given. */
    entries(projectId: string, since: string | undefined, fhirBase: string): AsyncGenerator<Resource>;
  };
}

class ExportCancelled extends Error {}

/** Checks the kick-off request and answers the export's parameters (400 for what the spec forbids). */
function kickOffParams(input: OperationInput, level: ExportParams['level']): ExportParams {
  const { repo, fhirBase } = input.context;
  if (!prefersAsync(input)) {
    fail(badRequest('$export is asynchronous: send the header Prefer: respond-async'));
  }
  const params = operationParams(input, '$export');
  const format = params.get('_outputFormat');
  if (format !== null && !OUTPUT_FORMATS.includes(format)) {
    fail(badRequest(`_outputFormat ${format} is not supported (use ${NDJSON})`, '_outputFormat'));
  }
  // Binary content and AsyncJobs (this export's own record among them) only when _type names them.
  const allowed =
    level === 'system' ? resourceTypes().filter((t) => !NOT_BY_DEFAULT.includes(t)) : compartmentMemberTypes('Patient');
  const asked = typeList(params);
  if (asked && level !== 'system') {
    const outside = asked.filter((t) => !allowed.includes(t));
    if (outside.length > 0) {
      fail(badRequest(`_type: ${outside.join(', ')} not in the Patient compartment`, '_type'));
    }
  }
  // Types a SMART scope or policy does not let the caller search are left out, as search would.
  const types = searchableTypes(repo, asked ?? allowed);
  if (asked && types.length === 0) {
    fail(forbiddenWith(`Not allowed to search ${asked.join(', ')}`));
  }
  const typesNotAllowed = asked?.filter((t) => !types.includes(t)) ?? [];
  return {
    level,
    types,
    ...(typesNotAllowed.length > 0 ? { typesNotAllowed } : {}),
    since: sinceValue(params.get('_since')),
    typeFilters: typeFilters(params, types),
    fhirBase,
  };
}

/** Parameters a _typeFilter query may not set: the export pages and shapes its searches itself. */
const NOT_IN_TYPE_FILTER = [
  '_count',
  '_cursor',
  '_offset',
  '_sort',
  '_total',
  '_summary',
  '_elements',
  '_include',
  '_revinclude',
];

/**
 * `_typeFilter=Observation?status=final,MedicationRequest?status=active` (comma-separated, repeatable):
 * per type, the queries whose union is exported. A filter on a type not exported is a 400.
 */
function typeFilters(params: URLSearchParams, types: string[]): Record<string, string[]> | undefined {
  const values = params.getAll('_typeFilter').flatMap((v) => v.split(/,(?=[A-Z][A-Za-z]*\?)/));
  if (values.length === 0) return undefined;
  const out: Record<string, string[]> = {};
  for (const value of values) {
    const match = /^([A-Z][A-Za-z]*)\?(.+)$/.exec(value.trim());
    if (!match) fail(badRequest(`_typeFilter ${value}: expected Type?search`, '_typeFilter'));
    const [, type, query] = match;
    if (!types.includes(type)) fail(badRequest(`_typeFilter ${value}: ${type} is not exported`, '_typeFilter'));
    const search = new URLSearchParams(query);
    const refused = NOT_IN_TYPE_FILTER.filter((name) => search.has(name));
    if (refused.length > 0) fail(badRequest(`_typeFilter ${value}: ${refused.join(', ')} not allowed`, '_typeFilter'));
    (out[type] ??= []).push(search.toString());
  }
  return out;
}

/** Compiles each _typeFilter query as the caller (a malformed one is a 400 at kick-off, not a failed job). */
async function checkTypeFilters(search: SearchService, repo: Repository, params: ExportParams): Promise<void> {
  for (const [type, queries] of Object.entries(params.typeFilters ?? {})) {
    for (const query of queries) {
      const probe = new URLSearchParams(query);
      probe.set('_count', '0');
      probe.set('_total', 'none');
      await search.search(repo, { resourceType: type, params: probe, fhirBase: params.fhirBase, strict: true });
    }
  }
}

/**
 * Search pages of one type, following the keyset cursor: memory stays one page deep. The issues a
 * page answers beside its results go to `problems`.
 */
async function* pagesOf(
  search: SearchService,
  repo: Repository,
  fhirBase: string,
  type: string,
  filters: URLSearchParams,
  job: AsyncJobContext,
  problems: ExportProblems,
): AsyncGenerator<Resource> {
  let cursor: string | null = null;
  for (let page = 1; ; page++) {
    const params = new URLSearchParams(filters);
    params.set('_count', String(PAGE_SIZE));
    params.set('_total', 'none');
    if (cursor) params.set('_cursor', cursor);
    const found = await searchResources(search, repo, { resourceType: type, params, fhirBase, strict: false });
    if (found.outcome) problems.searchOutcome(type, found.outcome);
    for (const entry of found.entries) yield entry.resource;
    const next = found.links.get('next');
    cursor = next ? new URL(next).searchParams.get('_cursor') : null;
    if (!cursor) return;
    if (page % CANCEL_CHECK_PAGES === 0 && (await job.cancelled())) throw new ExportCancelled();
  }
}

/** The search filters of each pass over a type: one for system and Patient exports, one per member chunk for a Group. */
function filterSets(params: ExportParams, type: string, members: string[]): URLSearchParams[] {
  const filters = params.typeFilters?.[type];
  const levelSets = levelFilterSets(params, type, members);
  if (!filters) return levelSets;
  return filters.flatMap((query) =>
    levelSets.map((set) => {
      const p = new URLSearchParams(query);
      for (const [k, v] of set) p.append(k, v);
      return p;
    }),
  );
}

function levelFilterSets(params: ExportParams, type: string, members: string[]): URLSearchParams[] {
  const base = new URLSearchParams();
  if (params.since) base.set('_lastUpdated', `gt${params.since}`);
  if (params.level === 'system') return [base];
  if (params.level === 'patient') {
    // Patient compartments are stored on every resource: "in some patient's compartment".
    base.set('_compartment:missing', 'false');
    return [base];
  }
  const sets: URLSearchParams[] = [];
  for (let i = 0; i < members.length; i += MEMBER_CHUNK) {
    const chunk = members.slice(i, i + MEMBER_CHUNK);
    const p = new URLSearchParams(base);
    if (type === 'Patient') p.set('_id', chunk.join(','));
    else p.set('_compartment', chunk.map((id) => `Patient/${id}`).join(','));
    sets.push(p);
  }
  return sets;
}

/** Writes resources as NDJSON Binaries, a new file past `cap` bytes; each id goes to `written` as soon as it exists. */
async function writeNdjson(
  deps: BulkExportDeps,
  repo: Repository,
  source: AsyncIterator<Resource>,
  written: string[],
): Promise<{ id: string; count: number }[]> {
  const cap = Math.floor(deps.binaryStore.maxBytes * 0.9);
  const files: { id: string; count: number }[] = [];
  let next = await source.next();
  while (!next.done) {
    let count = 0;
    const lines = async function* (): AsyncGenerator<Buffer> {
      let bytes = 0;
      while (!next.done) {
        const line = Buffer.from(`${JSON.stringify(next.value)}\n`, 'utf8');
        count++;
        bytes += line.length;
        yield line;
        next = await source.next();
        if (bytes >= cap) return;
      }
    };
    const { key } = await deps.binaryStore.write(Readable.from(lines()));
    const binary = (await repo.createResource(withStorageKey({ resourceType: 'Binary', contentType: NDJSON }, key)))
      .resource;
    written.push(binary.id as string);
    files.push({ id: binary.id as string, count });
  }
  return files;
}

/** Runs one export: NDJSON Binaries per type and one of its problems, their manifest entries in a Parameters output. */
async function runExport(deps: BulkExportDeps, params: ExportParams, job: AsyncJobContext): Promise<Resource> {
  if (job.repo.scope.system || !job.repo.scope.author) {
    // The requester's membership is gone: never export with more than they could see.
    fail(forbiddenWith('The requester of this export is no longer a member of the project'));
  }
  // The project's own data: not what linked or shared projects (terminology) let the requester read.
  const repo = new Repository(deps.repositoryDeps, { ...job.repo.scope, readProjects: [job.projectId] });
  const transactionTime = new Date().toISOString();
  const problems = new ExportProblems();
  for (const type of params.typesNotAllowed ?? []) problems.typeNotAllowed(type);
  const members =
    params.level === 'group'
      ? await groupMembers(deps.search, repo, params.fhirBase, params.groupId as string, problems)
      : [];
  const outputs: ExportOutput[] = [];
  const errors: ExportOutput[] = [];
  const binaries: string[] = [];
  const url = (id: string) => `${params.fhirBase}Binary/${id}`;
  try {
    for (const [index, type] of params.types.entries()) {
      if (await job.cancelled()) throw new ExportCancelled();
      // Several passes over a type (member chunks, _typeFilter queries) may meet a resource twice.
      const seen =
        params.level === 'group' || (params.typeFilters?.[type]?.length ?? 0) > 1 ? new Set<string>() : undefined;
      const trail = type === 'AuditEvent' && params.auditTrail ? deps.trail : undefined;
      const source = (async function* () {
        if (trail) {
          yield* trail.entries(job.projectId, params.since, params.fhirBase);
          return;
        }
        for (const filters of filterSets(params, type, members)) {
          for await (const resource of pagesOf(deps.search, repo, params.fhirBase, type, filters, job, problems)) {
            if (seen) {
              if (seen.has(resource.id as string)) continue;
              seen.add(resource.id as string);
            }
            yield resource;
          }
        }
      })();
      for (const file of await writeNdjson(deps, repo, source, binaries)) {
        outputs.push({ type, url: url(file.id), count: file.count });
      }
      await job.progress((index + 1) / params.types.length, type);
    }
    const problemSource = (async function* () {
      yield* problems.list;
    })();
    for (const file of await writeNdjson(deps, repo, problemSource, binaries)) {
      errors.push({ type: 'OperationOutcome', url: url(file.id), count: file.count });
    }
    if (await job.cancelled()) throw new ExportCancelled();
  } catch (err) {
    if (err instanceof ExportCancelled) {
      // Nothing of a cancelled export is kept: neither its data nor its error files.
      await Promise.all(binaries.map((id) => repo.deleteResource('Binary', id).catch(() => undefined)));
      return { resourceType: 'Parameters' };
    }
    throw err;
  }
  const file = (name: 'output' | 'error', o: ExportOutput) => ({
    name,
    part: [
      { name: 'type', valueCode: o.type },
      { name: 'url', valueUri: o.url },
      { name: 'count', valueInteger: o.count },
    ],
  });
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'transactionTime', valueInstant: transactionTime },
      ...outputs.map((o) => file('output', o)),
      ...errors.map((o) => file('error', o)),
    ],
  } as Resource;
}

interface ParametersPart {
  name: string;
  valueInstant?: string;
  valueCode?: string;
  valueUri?: string;
  valueInteger?: number;
  part?: ParametersPart[];
}

/** The completed export as the spec's manifest (export.html#response---complete-status). */
export function exportManifest(job: { request: string; transactionTime?: string; output?: Resource }): unknown {
  const parameters = ((job.output as { parameter?: ParametersPart[] } | undefined)?.parameter ??
    []) as ParametersPart[];
  const files = (name: 'output' | 'error') =>
    parameters
      .filter((p) => p.name === name)
      .map((p) => {
        const part = (n: string) => p.part?.find((x) => x.name === n);
        return { type: part('type')?.valueCode, url: part('url')?.valueUri, count: part('count')?.valueInteger };
      });
  return {
    transactionTime: parameters.find((p) => p.name === 'transactionTime')?.valueInstant ?? job.transactionTime,
    request: job.request,
    requiresAccessToken: true,
    output: files('output'),
    // OperationOutcomes of what the export could not include (export.html#response---complete-status).
    error: files('error'),
  };
}

/** Registers $export at its three levels, its job and the manifest view of its status. */
export function registerBulkExport(registry: OperationRegistry, deps: BulkExportDeps): void {
  deps.asyncJobs.define<ExportParams>(EXPORT_KIND, (params, job) => runExport(deps, params, job));
  deps.asyncJobs.completedView('export', exportManifest);
  const kickOff = async (input: OperationInput, params: ExportParams) => {
    await checkTypeFilters(deps.search, input.context.repo, params);
    return deps.asyncJobs.start(input, EXPORT_KIND, params, 'export');
  };
  registry.register({
    definition: SYSTEM_EXPORT,
    handler: (input) => {
      const params = kickOffParams(input, 'system');
      const auditTrail = params.types.includes('AuditEvent') && deps.trail?.exports(input) === true;
      return kickOff(input, auditTrail ? { ...params, auditTrail } : params);
    },
  });
  registry.register({
    definition: PATIENT_EXPORT,
    handler: (input) => kickOff(input, kickOffParams(input, 'patient')),
  });
  registry.register({
    definition: GROUP_EXPORT,
    handler: async (input) => {
      const params = kickOffParams(input, 'group');
      await input.context.repo.readResource('Group', input.target.id as string);
      return kickOff(input, { ...params, groupId: input.target.id });
    },
  });
}
