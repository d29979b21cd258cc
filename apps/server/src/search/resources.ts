import type { Bundle, OperationOutcome, Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { SearchInput, SearchService } from './service.js';

export { DEFAULT_COUNT, MAX_COUNT } from './engine.js';
export { MAX_OFFSET } from './query/execute.js';

/** One resource a search found, with how it was found (hl7.org/fhir/R4/bundle.html#searchset). */
export interface FoundResource {
  resource: Resource;
  mode: 'match' | 'include';
  score?: number;
}

/** One page of a search, as resources rather than Bundle text (GraphQL, server-side callers). */
export interface ResourcePage {
  entries: FoundResource[];
  /** Number of matches when the search knows it (last page, _total, _summary=count). */
  total?: number;
  /** The page links by relation ('self', 'first', 'next', 'previous'), as absolute URLs. */
  links: Map<string, string>;
  /** Warnings of lenient handling (unknown parameters ignored). */
  outcome?: OperationOutcome;
}

/**
 * Runs a search through the service, in the repository's scope (so access rules apply as for
 * REST), and returns the page as parsed resources. The service builds the searchset Bundle
 * around the stored JSON text, so parsing it once here costs what parsing the rows would.
 */
export async function searchResources(
  service: SearchService,
  repo: Repository,
  input: SearchInput,
): Promise<ResourcePage> {
  const bundle = JSON.parse(await service.search(repo, input)) as Bundle;
  const entries: FoundResource[] = [];
  let outcome: OperationOutcome | undefined;
  for (const entry of bundle.entry ?? []) {
    const mode = entry.search?.mode;
    if (mode === 'outcome') {
      outcome = entry.resource as OperationOutcome;
    } else if (entry.resource) {
      entries.push({
        resource: entry.resource,
        mode: mode === 'include' ? 'include' : 'match',
        score: entry.search?.score,
      });
    }
  }
  const links = new Map((bundle.link ?? []).map((l) => [l.relation ?? '', l.url ?? '']));
  return { entries, total: bundle.total, links, outcome };
}
