/**
 * The resources a view reads: the caller's search over the view's type, page after page along
 * the keyset cursor (memory stays one page deep), so access policies, SMART scopes and tenancy
 * apply exactly as to a search. Stored JSON is parsed keeping decimal precision when the view
 * needs it (lowBoundary/highBoundary).
 */
import type { Bundle, Resource } from '@hearth/core';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';
import { parseKeepingDecimals } from '../storage/decimal-json.js';

/** Resources per search page (the search maximum). */
export const PAGE_SIZE = 1000;

export interface SourceFilter {
  /** Only resources changed after this instant (`_lastUpdated=gt`). */
  since?: string;
  /** Only resources of this patient's compartment (the Patient itself for a Patient view). */
  patient?: string;
  /** Only these ids. */
  ids?: string[];
}

/** The search parameters of one pass over `type`. */
export function sourceParams(type: string, filter: SourceFilter): URLSearchParams {
  const params = new URLSearchParams();
  if (filter.since) params.set('_lastUpdated', `gt${filter.since}`);
  if (filter.ids) params.set('_id', filter.ids.join(','));
  if (filter.patient) {
    if (type === 'Patient') params.set('_id', filter.patient);
    else params.set('_compartment', `Patient/${filter.patient}`);
  }
  return params;
}

/** Pages of the type's resources the caller may read. */
export async function* resourcePages(
  search: SearchService,
  repo: Repository,
  fhirBase: string,
  type: string,
  filter: SourceFilter,
  keepDecimals: boolean,
): AsyncGenerator<Resource[]> {
  let cursor: string | null = null;
  for (;;) {
    const params = sourceParams(type, filter);
    params.set('_count', String(PAGE_SIZE));
    params.set('_total', 'none');
    if (cursor) params.set('_cursor', cursor);
    const text = await search.search(repo, { resourceType: type, params, fhirBase, strict: true });
    const bundle = (keepDecimals ? parseKeepingDecimals(text) : JSON.parse(text)) as Bundle;
    const resources = (bundle.entry ?? [])
      .filter((e) => e.search?.mode !== 'outcome' && e.resource?.resourceType === type)
      .map((e) => e.resource as Resource);
    yield resources;
    const next = bundle.link?.find((l) => l.relation === 'next')?.url;
    cursor = next ? new URL(next).searchParams.get('_cursor') : null;
    if (!cursor) return;
  }
}
