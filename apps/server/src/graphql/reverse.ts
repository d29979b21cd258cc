import DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import { badRequest, fail, getReferenceString, type Resource } from '@hearth/core';
import { DEFAULT_COUNT, MAX_COUNT } from '../search/resources.js';
import type { GraphqlContext } from './context.js';
import { fhirpathFilter } from './fhirpath.js';
import {
  hasCount,
  tooManyMatches,
  runSearch,
  searchConnection,
  searchList,
  type ConnectionResult,
} from './resolvers.js';
import { FHIRPATH_ARG } from './search-args.js';

type Args = Record<string, unknown>;

/** One reverse reference list: the `source` resources whose parameter `code` points at `focus`. */
interface ReverseKey {
  source: string;
  code: string;
  focus: string;
  args: Args;
}

const loaders = new WeakMap<GraphqlContext, DataLoader<ReverseKey, Resource[], string>>();

function loaderOf(ctx: GraphqlContext): DataLoader<ReverseKey, Resource[], string> {
  let loader = loaders.get(ctx);
  if (!loader) {
    loader = new DataLoader((keys) => loadReverse(ctx, keys), {
      cacheKeyFn: (k) => JSON.stringify([k.source, k.code, k.focus, argsKey(k.args)]),
      maxBatchSize: 100,
    });
    loaders.set(ctx, loader);
  }
  return loader;
}

function argsKey(args: Args): string {
  return JSON.stringify(Object.entries(args).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * `ObservationList(_reference: subject)` inside a Patient: the Observations whose `subject`
 * points at this Patient (hl7.org/fhir/R4/graphql.html#reverse). The same list asked for many
 * resources (inside a PatientList) is answered by one search for all of them, then split.
 */
export async function reverseList(
  sourceType: string,
  focus: Resource,
  args: Args,
  ctx: GraphqlContext,
): Promise<Resource[]> {
  const code = referenceCode(sourceType, focus, args, ctx);
  if (!focus.id) {
    return [];
  }
  const rest = { ...args };
  delete rest._reference;
  delete rest[FHIRPATH_ARG];
  const found = await loaderOf(ctx).load({ source: sourceType, code, focus: getReferenceString(focus), args: rest });
  return fhirpathFilter(found, args[FHIRPATH_ARG]);
}

/** The `_reference` parameter, checked: it must be able to point at the focus's type. */
function referenceCode(sourceType: string, focus: Resource, args: Args, ctx: GraphqlContext): string {
  const code = String(args._reference ?? '');
  if (!ctx.args.canTarget(sourceType, code, focus.resourceType)) {
    fail(badRequest(`${sourceType}.${code} cannot refer to a ${focus.resourceType}`, '_reference'));
  }
  return code;
}

/**
 * `ObservationConnection(_reference: subject)` inside a Patient: one page of the reverse
 * reference with its count and cursors (hl7.org/fhir/R4/graphql.html#reverse). The cursors carry
 * the focus, so following one at the root (`ObservationConnection(_cursor: …)`) reads the next page
 * of the same reverse search. One search per focus: unlike lists, pages are not merged.
 */
export async function reverseConnection(
  sourceType: string,
  focus: Resource,
  args: Args,
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
): Promise<ConnectionResult | null> {
  const code = referenceCode(sourceType, focus, args, ctx);
  if (!focus.id) {
    return null;
  }
  return searchConnection(sourceType, args, ctx, info, [code, getReferenceString(focus)]);
}

async function loadReverse(ctx: GraphqlContext, keys: readonly ReverseKey[]): Promise<(Resource[] | Error)[]> {
  const groups = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const group = JSON.stringify([k.source, k.code, argsKey(k.args)]);
    groups.set(group, [...(groups.get(group) ?? []), i]);
  });
  const results: (Resource[] | Error)[] = new Array(keys.length);
  await Promise.all(
    [...groups.values()].map(async (indices) => {
      try {
        await loadGroup(ctx, keys, indices, results);
      } catch (err) {
        indices.forEach((i) => (results[i] = err instanceof Error ? err : new Error(String(err))));
      }
    }),
  );
  return results;
}

/**
 * One search for every focus of a group (`subject=Patient/1,Patient/2,...`, page size `_count`
 * times the foci), its matches split by the focus each refers to. The page is a prefix of the
 * whole ordered result, so a focus with `_count` matches in it has exactly its first `_count`;
 * a focus with fewer, when the page was cut short, gets a search of its own. With `_offset`
 * (which cannot be split) each focus is searched alone.
 */
async function loadGroup(
  ctx: GraphqlContext,
  keys: readonly ReverseKey[],
  indices: number[],
  results: (Resource[] | Error)[],
): Promise<void> {
  const { source, code, args } = keys[indices[0]];
  const count = Math.min(Math.max(typeof args._count === 'number' ? args._count : DEFAULT_COUNT, 0), MAX_COUNT);
  // Each focus's own outcome: one focus with too many matches fails its list only.
  const alone = async (i: number) => {
    try {
      results[i] = await searchList(source, args, ctx, [code, keys[i].focus]);
    } catch (err) {
      results[i] = err instanceof Error ? err : new Error(String(err));
    }
  };
  const foci = [...new Set(indices.map((i) => keys[i].focus))];
  if (foci.length === 1 || count === 0 || (typeof args._offset === 'number' && args._offset > 0)) {
    await Promise.all(indices.map(alone));
    return;
  }
  const params = ctx.args.toSearchParams(source, { ...args, _count: undefined, _offset: undefined });
  params.append(code, foci.join(','));
  params.set('_count', String(Math.min(MAX_COUNT, count * foci.length)));
  const page = await runSearch(ctx, source, params);
  const wanted = new Set(foci);
  const byFocus = new Map<string, Resource[]>();
  let unexplained = false;
  for (const entry of page.entries) {
    if (entry.mode !== 'match') continue;
    const hits = new Set(
      ctx.args.referencesOf(source, code, entry.resource, ctx.fhirBase).filter((r) => wanted.has(r)),
    );
    // A match the split cannot place (a reference form the index reads differently): no guessing.
    unexplained ||= hits.size === 0;
    hits.forEach((focus) => byFocus.set(focus, [...(byFocus.get(focus) ?? []), entry.resource]));
  }
  const cut = page.links.has('next');
  // Without _count a list is all of its matches or an error: a focus that may have more than a
  // page is searched alone, which tells.
  const whole = !hasCount(args);
  const redo: number[] = [];
  for (const i of indices) {
    const found = byFocus.get(keys[i].focus) ?? [];
    if (unexplained || (cut && (found.length < count || (whole && found.length === count)))) {
      redo.push(i);
    } else if (whole && found.length > count) {
      results[i] = tooManyMatches(source, count);
    } else {
      results[i] = found.slice(0, count);
    }
  }
  await Promise.all(redo.map(alone));
}
