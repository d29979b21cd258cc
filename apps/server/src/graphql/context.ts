import DataLoader from 'dataloader';
import { getReferenceString, OperationOutcomeError, type Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { SearchService } from '../search/service.js';
import type { SearchArgCatalog } from './search-args.js';

/** Most ids read in one batch (one SQL statement per resource type and batch). */
const MAX_BATCH = 1000;

/** What every resolver of one GraphQL request works with. */
export interface GraphqlContext {
  /** The caller's repository: every read and write goes through it, so access rules apply. */
  repo: Repository;
  search: SearchService;
  args: SearchArgCatalog;
  /** Absolute FHIR base ('http://host/fhir/R4/'), to recognise absolute local references. */
  fhirBase: string;
  /** Resources by 'Type/id', loaded in batches and cached for the request. */
  resources: DataLoader<string, Resource | null>;
  /** The resource an object (a Reference, a backbone element) is found in, for '#id' references. */
  containers: WeakMap<object, Resource>;
  /**
   * `@slice` suffixes of list fields, by response path (JSON), computed by the resolvers on the
   * source items (the path may read elements the query does not select); see directives.ts.
   */
  slices: Map<string, string[]>;
}

export function createGraphqlContext(
  repo: Repository,
  search: SearchService,
  args: SearchArgCatalog,
  fhirBase: string,
): GraphqlContext {
  return {
    repo,
    search,
    args,
    fhirBase,
    resources: new DataLoader((keys) => loadResources(repo, keys), { maxBatchSize: MAX_BATCH }),
    containers: new WeakMap(),
    slices: new Map(),
  };
}

/**
 * The batch function: the keys grouped by type, one `readResources` per type (in parallel).
 * Missing, deleted and invisible resources are null; a type the caller may not read at all
 * fails its own keys only.
 */
async function loadResources(repo: Repository, keys: readonly string[]): Promise<(Resource | null | Error)[]> {
  const byType = new Map<string, string[]>();
  for (const key of keys) {
    const [type, id] = key.split('/');
    byType.set(type, [...(byType.get(type) ?? []), id]);
  }
  const found = new Map<string, Resource | Error>();
  await Promise.all(
    [...byType].map(async ([type, ids]) => {
      try {
        for (const r of await repo.readResources(type, ids)) {
          found.set(getReferenceString(r.resource), r.resource);
        }
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        ids.forEach((id) => found.set(`${type}/${id}`, error));
      }
    }),
  );
  return keys.map((k) => found.get(k) ?? null);
}

/** Remembers the resources a resource contains, so that '#id' references inside it resolve. */
export function trackContainer(ctx: GraphqlContext, resource: Resource): Resource {
  const contained = (resource as { contained?: unknown[] }).contained;
  if (!Array.isArray(contained) || contained.length === 0 || ctx.containers.has(resource)) {
    return resource;
  }
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (value && typeof value === 'object' && !ctx.containers.has(value)) {
      ctx.containers.set(value, resource);
      Object.values(value).forEach(visit);
    }
  };
  visit(resource);
  return resource;
}

/** Puts a resource just written into the request's cache, so later reads in the request see it. */
export function primeResource(ctx: GraphqlContext, resource: Resource): void {
  const key = getReferenceString(resource);
  ctx.resources.clear(key).prime(key, resource);
}

export function isOutcomeError(err: unknown): err is OperationOutcomeError {
  return err instanceof OperationOutcomeError;
}
