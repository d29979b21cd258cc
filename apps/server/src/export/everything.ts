// Patient/{id}/$everything (hl7.org/fhir/R4/patient-operation-everything.html): the Patient
// compartment search (Patient/{id}/*) with the operation's parameters mapped onto search ones, so
// the caller's access policy and SMART scopes apply exactly as they do to search.
import { badRequest, fail, type Bundle } from '@hearth/core';
import { standardDefinition } from '../operations/definitions/standard.js';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { OperationInput } from '../operations/types.js';
import { compartmentMemberTypes } from '../search/compartments.js';
import { isResourceTypeName } from '../search/resource-types.js';
import { parseDateRange, type DateRange } from '../search/values/dates.js';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';

/** Types the compartment's resources commonly reference that belong with the record (not other patients). */
export const EVERYTHING_REFERENCED_TYPES = [
  'Practitioner',
  'PractitionerRole',
  'Organization',
  'Location',
  'Medication',
  'Substance',
  'Device',
];

/** A FHIR instant (with a time zone), or a date (taken as its start, UTC). */
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Checks `_since` (an instant) and answers it as a search prefix value. */
export function sinceValue(value: string | null, name = '_since'): string | undefined {
  if (value === null || value === '') return undefined;
  if (!INSTANT.test(value) || Number.isNaN(Date.parse(value))) {
    fail(badRequest(`${name} must be a FHIR instant such as 2024-01-31T00:00:00Z`, name));
  }
  return value;
}

/** The `_type` list (comma-separated, repeatable), each a known resource type. */
export function typeList(params: URLSearchParams): string[] | undefined {
  const values = params
    .getAll('_type')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  if (values.length === 0) return undefined;
  for (const t of values) {
    if (!isResourceTypeName(t)) fail(badRequest(`_type: unknown resource type "${t}"`, '_type'));
  }
  return [...new Set(values)];
}

/**
 * `start` and `end` (dates or dateTimes): care dates from the start of `start` to the end of
 * `end`, either open; undefined when neither is given.
 */
export function careDateRange(params: URLSearchParams): { low: number; high: number } | undefined {
  const bound = (name: 'start' | 'end'): DateRange | undefined => {
    const value = params.get(name);
    if (value === null || value === '') return undefined;
    const range = parseDateRange(value);
    if (!range) fail(badRequest(`${name} must be a FHIR date or dateTime such as 2024-01-31`, name));
    return range;
  };
  const start = bound('start');
  const end = bound('end');
  if (!start && !end) return undefined;
  const range = { low: start?.low ?? -Infinity, high: end?.high ?? Infinity };
  if (range.low >= range.high) fail(badRequest('start must not be after end', 'start'));
  return range;
}

/** The types the caller may search (a SMART scope or policy may allow only some). */
export function searchableTypes(repo: Repository, types: string[]): string[] {
  const guard = repo.scope.access;
  if (!guard) return types;
  return types.filter((t) => {
    try {
      guard.assertInteraction(t, 'search');
      return true;
    } catch {
      return false;
    }
  });
}

/** The operation's parameters from the query string and, for POST, a Parameters or form body. */
export function operationParams(input: OperationInput, operation = 'Patient/$everything'): URLSearchParams {
  const params = new URLSearchParams(input.query);
  const body = input.body as { resourceType?: string; parameter?: Record<string, unknown>[] } | undefined;
  if (input.method === 'POST' && body && typeof body === 'object' && !Buffer.isBuffer(body)) {
    if (body.resourceType === 'Parameters') {
      for (const p of body.parameter ?? []) {
        const value = Object.entries(p).find(([k]) => k.startsWith('value'))?.[1];
        if (typeof p.name === 'string' && value !== undefined) params.append(p.name, String(value));
      }
    } else if (body.resourceType !== undefined) {
      fail(badRequest(`${operation} takes a Parameters resource in a POST body`));
    }
  }
  return params;
}

/** What $everything passes on from its own parameters to the links it answers. */
const KEPT = ['_since', '_type', '_count', 'start', 'end', '_cursor'];

export function everythingOperation(search: SearchService): OperationRegistration {
  return {
    definition: standardDefinition('Patient-everything'),
    // R4 also defines Patient/$everything at type level (every patient); Hearth answers one patient's.
    override: { levels: ['instance'] },
    handler: async (input) => {
      const { repo, fhirBase } = input.context;
      const id = input.target.id as string;
      const given = operationParams(input);
      // 404 for a patient that does not exist or that the caller may not read.
      await repo.readResource('Patient', id);

      const members = compartmentMemberTypes('Patient');
      const wanted = typeList(given)?.filter((t) => members.includes(t)) ?? members;
      const types = searchableTypes(repo, wanted);
      const params = new URLSearchParams();
      params.set('_type', types.join(','));
      const since = sinceValue(given.get('_since'));
      if (since) params.set('_lastUpdated', `gt${since}`);
      const count = given.get('_count');
      if (count !== null) {
        if (!/^\d+$/.test(count)) fail(badRequest('_count must be a non-negative integer', '_count'));
        params.set('_count', count);
      }
      const careDates = careDateRange(given);
      const cursor = given.get('_cursor');
      if (cursor) params.set('_cursor', cursor);
      for (const type of EVERYTHING_REFERENCED_TYPES) {
        params.append('_include', `*:*:${type}`);
      }
      const bundle: Bundle =
        types.length === 0
          ? { resourceType: 'Bundle', type: 'searchset', total: 0, entry: [] }
          : (JSON.parse(
              await search.search(repo, {
                compartment: { resourceType: 'Patient', id },
                params,
                fhirBase,
                strict: false,
                careDates,
              }),
            ) as Bundle);
      bundle.link = everythingLinks(bundle, `${fhirBase}Patient/${id}/$everything`, given);
      return jsonResult(bundle);
    },
  };
}

/** The search's links rewritten to this operation: its own parameters, the next page's cursor. */
function everythingLinks(bundle: Bundle, base: string, given: URLSearchParams): Bundle['link'] {
  const own = new URLSearchParams();
  for (const [k, v] of given) if (KEPT.includes(k)) own.append(k, v);
  const url = (p: URLSearchParams) => (p.toString() ? `${base}?${p.toString()}` : base);
  const links: NonNullable<Bundle['link']> = [{ relation: 'self', url: url(own) }];
  const next = bundle.link?.find((l) => l.relation === 'next');
  const nextCursor = next ? new URL(next.url).searchParams.get('_cursor') : null;
  if (nextCursor) {
    const p = new URLSearchParams(own);
    p.set('_cursor', nextCursor);
    links.push({ relation: 'next', url: url(p) });
  }
  return links;
}
