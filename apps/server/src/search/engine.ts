import {
  badRequest,
  fail,
  parseSearchRequest,
  type OperationOutcome,
  type Resource,
  type SearchParamType,
  type SearchRequest,
} from '@hearth/core';
import type { Pool, Queryable } from '../platform/postgres.js';
import type { Repository } from '../storage/repository.js';
import type { ConditionalMatcher, RepositoryScope } from '../storage/types.js';
import { COMPARTMENT_TYPES, compartmentMemberTypes } from './compartments.js';
import type { SearchParamRegistry } from './registry/project-params.js';
import { bundleText, type BundleEntryText } from './query/bundle.js';
import { QueryContext, type SearchAccess, type SubsumptionLookup, type ValueSetExpander } from './query/context.js';
import { decodeCursor, encodeCursor } from './query/cursor.js';
import { countMatches, estimateMatches, MAX_OFFSET, selectPage } from './query/execute.js';
import { loadIncluded, pageReferences, type FoundRow } from './query/include.js';
import { compileSearch, type CompartmentRef } from './query/plan.js';
import { MAX_LINKS } from './query/conditions.js';
import { expandValueSets, lookUpSubsumption } from './query/terminology.js';
import type { SearchInput, SearchService } from './service.js';

/** Default and largest page sizes (CONTRACTS.md: 20 and 1000). */
export const DEFAULT_COUNT = 20;
export const MAX_COUNT = 1000;

/** Applies _summary / _elements to one resource (resources/elements.ts shapeResource, injected). */
export type ResourceShaper = (resource: Resource, summary?: string, elements?: string[]) => Resource;

export interface SearchEngineOptions {
  pool: Pool;
  registry: SearchParamRegistry;
  shape?: ResourceShaper;
  expandValueSet?: ValueSetExpander;
  subsumedCodes?: SubsumptionLookup;
  /** True while a project's resources of a type are being reindexed for its own SearchParameters. */
  reindexing?: (projectId: string, resourceType: string) => boolean;
}

/** The scope's access rules, when auth has set them (storage's RepositoryScope.access). */
function accessOf(scope: RepositoryScope): SearchAccess | undefined {
  return (scope as RepositoryScope & { access?: SearchAccess }).access;
}

/** Search: a SearchRequest compiled to SQL over the index tables, answered as a searchset Bundle. */
export class SearchEngine implements SearchService, ConditionalMatcher {
  constructor(private readonly options: SearchEngineOptions) {}

  /** The type of the parameter a (possibly chained or reverse-chained) code ends in. */
  private paramType(resourceType: string, code: string, projectId: string): SearchParamType | undefined {
    if (code.split(/[.:]/, MAX_LINKS + 1).length > MAX_LINKS) {
      // Too long to follow (compiling refuses it with a 400); a 10,000-link name would exhaust the stack here.
      return undefined;
    }
    const registry = this.options.registry;
    if (code.startsWith('_has:')) {
      const parts = code.split(':');
      return parts.length >= 4 ? this.paramType(parts[1], parts.slice(3).join(':'), projectId) : undefined;
    }
    const links = code.split('.');
    if (links.length === 1) {
      const name = code.split(':')[0];
      return resourceType ? registry.get(resourceType, name, projectId)?.type : registry.get('Patient', name)?.type;
    }
    const [head, typeModifier] = links[0].split(':');
    const param = resourceType ? registry.get(resourceType, head, projectId) : undefined;
    const targets = typeModifier ? [typeModifier] : (param?.target ?? []);
    for (const t of targets) {
      const type = this.paramType(t, links.slice(1).join('.'), projectId);
      if (type) return type;
    }
    return undefined;
  }

  private parse(resourceType: string, params: URLSearchParams | string, projectId: string): SearchRequest {
    const query = typeof params === 'string' ? new URLSearchParams(params) : params;
    return parseSearchRequest(resourceType, query, {
      paramType: (t, code) => this.paramType(t, code, projectId),
    });
  }

  private context(scope: RepositoryScope, fhirBase: string, strict: boolean): QueryContext {
    return new QueryContext(
      this.options.registry,
      scope.projectId,
      scope.readProjects,
      fhirBase,
      strict,
      accessOf(scope),
    );
  }

  /** Value set expansions and code hierarchies the request needs, fetched before compiling it. */
  private async lookUpTerminology(ctx: QueryContext, request: SearchRequest, resourceType: string): Promise<void> {
    await expandValueSets(ctx, request, this.options.expandValueSet);
    const isToken = (code: string) => this.paramType(resourceType, code, ctx.projectId) === 'token';
    await lookUpSubsumption(ctx, request, isToken, this.options.subsumedCodes);
  }

  /** A search on a project's own parameter whose reindex is still running says so. */
  private noteReindexing(ctx: QueryContext, request: SearchRequest, resourceType: string | undefined): void {
    const reindexing = this.options.reindexing;
    if (!reindexing || !resourceType || !reindexing(ctx.projectId, resourceType)) return;
    for (const filter of request.filters ?? []) {
      const code = filter.code.split(/[.:]/)[0];
      if (this.options.registry.get(resourceType, code, ctx.projectId)?.custom) {
        ctx.information.push(
          `${resourceType} resources are being reindexed for this project's SearchParameters: results on "${code}" may be incomplete until that ends`,
        );
      }
    }
  }

  async search(repo: Repository, input: SearchInput): Promise<string> {
    // Inside a transaction Bundle the repository's own client: GET entries see the Bundle's writes.
    const db = repo.queryable;
    const scope = repo.scope;
    await this.options.registry.ensure(db, scope.projectId);
    const request = this.parse(input.resourceType ?? '', input.params, scope.projectId);
    const compartment = input.compartment;
    if (compartment) {
      checkCompartment(compartment, input.resourceType);
    }
    const count = Math.min(request.count ?? DEFAULT_COUNT, MAX_COUNT);
    const ctx = this.context(scope, input.fhirBase, input.strict);
    this.noteReindexing(ctx, request, input.resourceType);
    await this.lookUpTerminology(ctx, request, input.resourceType ?? '');
    const cursorKeys = request.cursor ? decodeCursor(request.cursor, sortSignature(request)).keys : undefined;
    const idOrder = input.resourceType ? idOrdering(request) : undefined;
    if (cursorKeys && idOrder && typeof cursorKeys[0] === 'string') {
      ctx.idBound = { op: idOrder === 'asc' ? '>=' : '<=', value: cursorKeys[0] };
    }
    const compiled = compileSearch(ctx, request, compartment, input.careDates);
    compiled.refs = pageReferences(ctx, compiled.row, request.include ?? []);
    const links = new SearchLinks(input, compartment);

    if (request.summary === 'count') {
      const total = await countMatches(db, ctx, compiled);
      return bundleText({ total, links: [links.self()], entries: [], outcome: warnings(ctx) });
    }
    const cursor = request.cursor ? decodeCursor(request.cursor, compiled.sort.signature) : undefined;
    const offset = cursor ? cursor.offset : (request.offset ?? 0);
    const page = count > 0 ? await selectPage(db, ctx, compiled, count, offset, cursor) : { rows: [], hasMore: true };
    let total: number | undefined;
    if (request.total === 'accurate') {
      total = await countMatches(db, ctx, compiled);
    } else if (request.total === 'estimate' || (count === 0 && request.total !== 'none')) {
      total = await estimateMatches(db, ctx, compiled);
    } else if (!page.hasMore) {
      total = offset + page.rows.length; // Known without counting: this is the last page.
    }
    const included = await loadIncluded(db, ctx, request.include ?? [], request.revInclude ?? [], page.rows);

    const linkList = [links.self(), links.first()];
    if (page.hasMore && page.rows.length > 0) {
      const last = page.rows[page.rows.length - 1];
      linkList.push(
        links.next(
          encodeCursor({
            phase: last.phase,
            keys: last.keys,
            offset: offset + page.rows.length,
            signature: compiled.sort.signature,
          }),
        ),
      );
    }
    if (offset > 0 && offset - count <= MAX_OFFSET) {
      linkList.push(links.previous(Math.max(0, offset - count)));
    }
    const entries: BundleEntryText[] = [
      ...page.rows.map((r) => this.entry(r, 'match', input, request, ctx)),
      ...included.map((r) => this.entry(r, 'include', input, request, ctx)),
    ];
    return bundleText({ total, links: linkList, entries, outcome: warnings(ctx) });
  }

  private entry(
    row: FoundRow,
    mode: 'match' | 'include',
    input: SearchInput,
    request: SearchRequest,
    ctx: QueryContext,
  ): BundleEntryText {
    let content = row.content;
    const redact = ctx.access?.hidesFields?.(row.resource_type) && ctx.access.redact;
    const shape =
      (request.summary && request.summary !== 'false') || request.fields?.length ? this.options.shape : undefined;
    if (redact || shape) {
      let resource = JSON.parse(content) as Resource;
      if (redact) resource = ctx.access!.redact!(resource);
      if (shape) resource = shape(resource, request.summary, request.fields);
      content = JSON.stringify(resource);
    }
    return { fullUrl: `${input.fhirBase}${row.resource_type}/${row.id}`, content, mode };
  }

  /** Conditional interactions: the ids of at most `limit` matches, inside the caller's transaction. */
  async findIds(
    db: Queryable,
    scope: RepositoryScope,
    resourceType: string,
    query: string,
    limit: number,
  ): Promise<string[]> {
    await this.options.registry.ensure(db, scope.projectId);
    const request = this.parse(resourceType, query, scope.projectId);
    if (!request.filters?.length && !request.filter) {
      fail(badRequest(`A conditional interaction needs search parameters`, resourceType));
    }
    const ctx = this.context(scope, '', true);
    await this.lookUpTerminology(ctx, request, resourceType);
    const compiled = compileSearch(ctx, { ...request, sortRules: [] });
    const page = await selectPage(db, ctx, compiled, limit, 0, undefined);
    return page.rows.map((r) => r.id);
  }
}

/** The order a cursor belongs to (query/sort.ts planSort's signature). */
function sortSignature(request: SearchRequest): string {
  return (request.sortRules ?? []).map((s) => (s.descending ? '-' : '') + s.code).join(',');
}

/** 'asc' / 'desc' when a one-type search is ordered by the resource id first. */
function idOrdering(request: SearchRequest): 'asc' | 'desc' | undefined {
  const first = request.sortRules?.[0];
  if (!first) return 'asc';
  return first.code === '_id' ? (first.descending ? 'desc' : 'asc') : undefined;
}

function checkCompartment(compartment: CompartmentRef, resourceType: string | undefined): void {
  if (!COMPARTMENT_TYPES.includes(compartment.resourceType)) {
    fail(badRequest(`${compartment.resourceType} is not a compartment type (${COMPARTMENT_TYPES.join(', ')})`));
  }
  if (resourceType && !compartmentMemberTypes(compartment.resourceType).includes(resourceType)) {
    fail(badRequest(`${resourceType} is not in the ${compartment.resourceType} compartment`));
  }
}

function warnings(ctx: QueryContext): OperationOutcome | undefined {
  if (ctx.warnings.length === 0 && ctx.information.length === 0) return undefined;
  return {
    resourceType: 'OperationOutcome',
    issue: [
      ...ctx.warnings.map((text) => ({ severity: 'warning', code: 'not-supported', details: { text } })),
      ...ctx.information.map((text) => ({ severity: 'information', code: 'informational', details: { text } })),
    ],
  } as OperationOutcome;
}

/** Bundle links of a search: the same parameters, with the paging ones replaced. */
class SearchLinks {
  private readonly base: string;
  private readonly params: URLSearchParams;

  constructor(input: SearchInput, compartment?: CompartmentRef) {
    const path = compartment
      ? `${compartment.resourceType}/${compartment.id}/${input.resourceType ?? '*'}`
      : (input.resourceType ?? '');
    this.base = `${input.fhirBase}${path}`;
    this.params = new URLSearchParams(input.params);
  }

  private url(params: URLSearchParams): string {
    const q = params.toString();
    return q ? `${this.base}?${q}` : this.base;
  }

  private without(): URLSearchParams {
    const p = new URLSearchParams(this.params);
    p.delete('_cursor');
    p.delete('_offset');
    return p;
  }

  self() {
    return { relation: 'self', url: this.url(this.params) };
  }
  first() {
    return { relation: 'first', url: this.url(this.without()) };
  }
  next(cursor: string) {
    const p = this.without();
    p.set('_cursor', cursor);
    return { relation: 'next', url: this.url(p) };
  }
  previous(offset: number) {
    const p = this.without();
    if (offset > 0) p.set('_offset', String(offset));
    return { relation: 'previous', url: this.url(p) };
  }
}
