import {
  fail,
  isValidId,
  notFoundWith,
  OperationOutcomeError,
  parseReference,
  tooCostly,
  type Reference,
  type Resource,
} from '@hearth/core';
import type { GraphQLResolveInfo } from 'graphql';
import { DEFAULT_COUNT, MAX_COUNT, MAX_OFFSET, searchResources, type FoundResource } from '../search/resources.js';
import { isOutcomeError, primeResource, trackContainer, type GraphqlContext } from './context.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { fhirpathFilter, fhirpathPredicate } from './fhirpath.js';
import { FHIRPATH_ARG } from './search-args.js';
import { selectsField } from './selection.js';

type Args = Record<string, unknown>;

/** `Patient(id: "..")`: one resource, read through the request's batching loader. */
export async function readById(resourceType: string, args: Args, ctx: GraphqlContext): Promise<Resource> {
  const id = String(args.id ?? '');
  const resource = isValidId(id) ? await ctx.resources.load(`${resourceType}/${id}`) : null;
  if (!resource) {
    fail(notFoundWith(`${resourceType}/${id} not found`));
  }
  return trackContainer(ctx, resource);
}

/** One search page through the search service, its resources cached for the request. */
export async function runSearch(ctx: GraphqlContext, resourceType: string, params: URLSearchParams) {
  // Strict handling: an argument the search cannot honour is an error, never silently ignored.
  const page = await searchResources(ctx.search, ctx.repo, {
    resourceType,
    params,
    fhirBase: ctx.fhirBase,
    strict: true,
  });
  for (const entry of page.entries) {
    primeResource(ctx, entry.resource);
    trackContainer(ctx, entry.resource);
  }
  return page;
}

/** `PatientList(name: "..", _count: 10)`: the matches of one search page. */
export async function searchList(
  resourceType: string,
  args: Args,
  ctx: GraphqlContext,
  extra?: [string, string],
): Promise<Resource[]> {
  const params = ctx.args.toSearchParams(resourceType, args);
  if (extra) {
    params.append(...extra);
  }
  const page = await runSearch(ctx, resourceType, params);
  if (page.links.has('next') && !hasCount(args)) {
    throw tooManyMatches(resourceType, Number(params.get('_count') ?? DEFAULT_COUNT));
  }
  return fhirpathFilter(
    page.entries.filter((e) => e.mode === 'match').map((e) => e.resource),
    args[FHIRPATH_ARG],
  );
}

/** True when the query gave the list's page size itself (`_count`): then a page is what it asked for. */
export function hasCount(args: Args): boolean {
  return typeof args._count === 'number';
}

/**
 * A list without `_count` is the whole result or an error, never silently cut
 * (hl7.org/fhir/R4/graphql.html#searching: "the server returns everything, or an error").
 */
export function tooManyMatches(resourceType: string, pageSize: number): OperationOutcomeError {
  return new OperationOutcomeError(
    tooCostly(
      `${resourceType}List has more than ${pageSize} matches: give _count (at most ${MAX_COUNT}) and _offset, or use ${resourceType}Connection to page`,
    ),
  );
}

export interface ConnectionResult {
  count?: number;
  offset: number;
  pagesize: number;
  first?: string;
  previous?: string;
  next?: string;
  last?: string;
  edges: FoundResource[];
}

/** The query string of a Bundle link, without the parts the connection decides itself. */
function linkQuery(url: string | undefined): URLSearchParams | undefined {
  if (url === undefined) {
    return undefined;
  }
  const i = url.indexOf('?');
  const params = new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
  params.delete('_total');
  return params;
}

/**
 * `PatientConnection(...)`: a page with its paging cursors (hl7.org/fhir/R4/graphql.html#searching).
 * A cursor carries the search of its page, so `_cursor` alone reads that page; `count` (the
 * total) is only computed when the query asks for it (or for `last`).
 */
export async function searchConnection(
  resourceType: string,
  args: Args,
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  extra?: [string, string],
): Promise<ConnectionResult> {
  let params: URLSearchParams;
  let offset: number;
  let fhirpath = typeof args[FHIRPATH_ARG] === 'string' ? args[FHIRPATH_ARG] : undefined;
  if (typeof args._cursor === 'string') {
    const cursor = decodeCursor(args._cursor, resourceType);
    params = cursor.params;
    offset = cursor.offset;
    fhirpath = cursor.fhirpath;
  } else {
    params = ctx.args.toSearchParams(resourceType, args);
    if (extra) {
      params.append(...extra);
    }
    offset = typeof args._offset === 'number' ? args._offset : 0;
  }
  const keep = fhirpathPredicate(fhirpath);
  const wantsTotal = selectsField(info, 'count') || selectsField(info, 'last');
  if (wantsTotal) {
    params.set('_total', 'accurate');
  }
  const page = await runSearch(ctx, resourceType, params);
  const pagesize = Math.min(Number(params.get('_count') ?? DEFAULT_COUNT), MAX_COUNT);
  const matches = page.entries.filter((e) => e.mode === 'match').length;
  const cursor = (query: URLSearchParams | undefined, at: number) =>
    query ? encodeCursor(resourceType, query, at, fhirpath) : undefined;
  const previousQuery = linkQuery(page.links.get('previous'));
  const result: ConnectionResult = {
    count: page.total,
    offset,
    pagesize,
    first: cursor(linkQuery(page.links.get('first')), 0),
    next: cursor(linkQuery(page.links.get('next')), offset + matches),
    previous: cursor(previousQuery, Number(previousQuery?.get('_offset') ?? 0)),
    // The fhirpath condition applies to this page's matches (the spec lets pages come out shorter).
    edges: keep ? page.entries.filter((e) => e.mode !== 'match' || keep(e.resource)) : page.entries,
  };
  if (page.total !== undefined && pagesize > 0) {
    const lastOffset = Math.max(0, Math.floor((page.total - 1) / pagesize) * pagesize);
    const firstQuery = linkQuery(page.links.get('first'));
    if (firstQuery && lastOffset <= MAX_OFFSET) {
      if (lastOffset > 0) {
        firstQuery.set('_offset', String(lastOffset));
      }
      result.last = encodeCursor(resourceType, firstQuery, lastOffset, fhirpath);
    }
  }
  return result;
}

/** A reference to this server: relative ('Patient/1'), or absolute under the server's FHIR base. */
function localTarget(text: string, fhirBase: string): ReturnType<typeof parseReference> {
  const relative = text.startsWith(fhirBase) ? text.slice(fhirBase.length) : text;
  if (/^[a-z][a-z0-9+.-]*:/i.test(relative)) {
    return undefined; // another server's URL, a urn:uuid, a logical reference
  }
  return parseReference(relative);
}

/**
 * `Reference.resource`: the resource a reference points at, resolved through the request's
 * loader (one query per type for all the references of a level). Contained references ('#id')
 * resolve inside their container. Per the spec, a reference that cannot be resolved is an
 * error unless `optional: true`; `type` keeps only references to that type.
 */
export async function resolveReference(source: Reference, args: Args, ctx: GraphqlContext): Promise<Resource | null> {
  const text = source.reference;
  if (!text) {
    return null; // nothing to resolve (an identifier or display only)
  }
  const wantedType = typeof args.type === 'string' ? args.type : undefined;
  const optional = args.optional === true;
  const unresolved = (err?: unknown): null => {
    if (optional) {
      return null;
    }
    if (err && isOutcomeError(err) && err.status === 403) {
      throw err;
    }
    fail(notFoundWith(`Reference "${text}" could not be resolved`));
  };
  if (text.startsWith('#')) {
    const container = ctx.containers.get(source);
    const contained = (container as { contained?: Resource[] } | undefined)?.contained ?? [];
    const found = contained.find((r) => `#${r.id}` === text);
    if (found && wantedType && found.resourceType !== wantedType) {
      return null;
    }
    return found ?? unresolved();
  }
  const target = localTarget(text, ctx.fhirBase);
  if (!target) {
    return unresolved();
  }
  if (wantedType && target.resourceType !== wantedType) {
    return null;
  }
  try {
    if (target.versionId) {
      const read = await ctx.repo.readVersion(target.resourceType, target.id, target.versionId);
      return trackContainer(ctx, read.resource);
    }
    const resource = await ctx.resources.load(`${target.resourceType}/${target.id}`);
    return resource ? trackContainer(ctx, resource) : unresolved();
  } catch (err) {
    return unresolved(err);
  }
}
