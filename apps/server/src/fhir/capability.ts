// GET [base]/metadata: the CapabilityStatement (hl7.org/fhir/R4/capabilitystatement.html),
// derived from what is wired: stored types, the OperationRegistry and the search parameters.
import { getAllResourceTypes, getTypeSchema } from '@hearth/definitions';
import type { OperationEntry, OperationRegistry } from '../operations/registry.js';

/** One search parameter as the CapabilityStatement lists it. */
export interface CapabilitySearchParam {
  name: string;
  type: string;
  definition?: string;
  documentation?: string;
  /** Reference parameters: the types they may point to (undefined: any). */
  target?: string[];
}

export interface CapabilityDeps {
  operations: OperationRegistry;
  /** Search parameters of a type: base R4 and platform ones, and a project's own when given. */
  searchParams?: (resourceType: string, projectId?: string) => Promise<CapabilitySearchParam[]>;
  version: string;
}

/** Interactions every stored type supports (http.html). */
const TYPE_INTERACTIONS = [
  'read',
  'vread',
  'update',
  'patch',
  'delete',
  'history-instance',
  'history-type',
  'create',
  'search-type',
];

/**
 * The statement as JSON text, built once per set of search parameters: the base one serves
 * anonymous callers and every project without SearchParameters of its own; a project with its
 * own gets (and keeps, among the last few) one listing them. The parameters are read on each
 * call (cheap) so that a new project SearchParameter shows at once.
 */
export function createCapabilityStatement(
  deps: CapabilityDeps,
): (fhirBase: string, projectId?: string) => Promise<string> {
  const started = new Date().toISOString();
  // By base URL and search parameters: every project without parameters of its own shares one.
  const cache = new Map<string, Promise<string>>();
  return async (fhirBase, projectId) => {
    const paramsByType = await searchParamsByType(deps, projectId);
    const key = `${fhirBase}\n${fingerprint(paramsByType)}`;
    let text = cache.get(key);
    if (!text) {
      text = build(deps, fhirBase, started, paramsByType).then((cs) => JSON.stringify(cs));
      const built = text;
      built.catch(() => cache.delete(key));
      cache.set(key, built);
      // A few variants at most (each is a couple of MB): the oldest goes first.
      if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
    }
    return text;
  };
}

const MAX_CACHED = 8;

async function searchParamsByType(
  deps: CapabilityDeps,
  projectId: string | undefined,
): Promise<Map<string, CapabilitySearchParam[]>> {
  const types = getAllResourceTypes();
  return new Map(
    await Promise.all(types.map(async (t) => [t, (await deps.searchParams?.(t, projectId)) ?? []] as const)),
  );
}

/** What the statement's search part depends on, as one string. */
function fingerprint(paramsByType: Map<string, CapabilitySearchParam[]>): string {
  const parts: string[] = [];
  for (const [type, params] of paramsByType) {
    for (const p of params) {
      parts.push(
        `${type}|${p.name}|${p.type}|${p.definition ?? ''}|${p.target?.join(',') ?? '*'}|${p.documentation ?? ''}`,
      );
    }
  }
  return parts.join('\n');
}

async function build(
  deps: CapabilityDeps,
  fhirBase: string,
  date: string,
  paramsByType: Map<string, CapabilitySearchParam[]>,
): Promise<Record<string, unknown>> {
  const types = getAllResourceTypes();
  const ops = deps.operations.all();
  // Operations open to any type are listed once, at rest level; type-bound ones under their types.
  const generic = ops.filter((op) => !op.resourceTypes || op.levels.includes('system'));

  const revIncludesOf = revIncludesByTarget(types, paramsByType);

  const resource = types.map((type) => {
    const params = paramsByType.get(type) ?? [];
    const entry: Record<string, unknown> = {
      type,
      profile: getTypeSchema(type)?.url ?? `http://hl7.org/fhir/StructureDefinition/${type}`,
      interaction: TYPE_INTERACTIONS.map((code) => ({ code })),
      versioning: 'versioned-update',
      readHistory: true,
      updateCreate: true,
      conditionalCreate: true,
      conditionalRead: 'full-support',
      conditionalUpdate: true,
      conditionalDelete: 'multiple',
      referencePolicy: ['literal', 'local'],
    };
    const includes = params.filter((p) => p.type === 'reference').map((p) => `${type}:${p.name}`);
    if (includes.length > 0) {
      entry.searchInclude = includes;
    }
    const revIncludes = revIncludesOf.get(type);
    if (revIncludes?.length) {
      entry.searchRevInclude = revIncludes;
    }
    if (params.length > 0) {
      entry.searchParam = params.map((p) => {
        const sp: Record<string, unknown> = { name: p.name, type: p.type };
        if (p.definition) {
          sp.definition = p.definition;
        }
        if (p.documentation) {
          sp.documentation = p.documentation;
        }
        return sp;
      });
    }
    const own = ops.filter((op) => op.resourceTypes?.includes(type) && !op.levels.includes('system'));
    if (own.length > 0) {
      entry.operation = uniqueOps(own);
    }
    return entry;
  });

  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date,
    publisher: 'Hearth',
    kind: 'instance',
    software: { name: 'Hearth', version: deps.version },
    implementation: { description: 'Hearth FHIR R4 server', url: fhirBase },
    fhirVersion: '4.0.1',
    format: ['json', 'application/fhir+json'],
    patchFormat: ['application/json-patch+json', 'application/fhir+json'],
    rest: [
      {
        mode: 'server',
        security: {
          cors: true,
          service: [
            {
              coding: [
                {
                  system: 'http://terminology.hl7.org/CodeSystem/restful-security-service',
                  code: 'SMART-on-FHIR',
                },
              ],
            },
          ],
          extension: [
            {
              url: 'http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris',
              extension: [
                { url: 'authorize', valueUri: new URL('../../oauth2/authorize', fhirBase).toString() },
                { url: 'token', valueUri: new URL('../../oauth2/token', fhirBase).toString() },
              ],
            },
          ],
        },
        resource,
        interaction: ['transaction', 'batch', 'search-system', 'history-system'].map((code) => ({ code })),
        operation: uniqueOps(generic),
      },
    ],
  };
}

/**
 * Per type, the `_revinclude` values that can bring resources of it in: `Source:param` for every
 * reference parameter that may point at it (a parameter without targets points at any type).
 */
function revIncludesByTarget(
  types: string[],
  paramsByType: Map<string, CapabilitySearchParam[]>,
): Map<string, string[]> {
  const out = new Map<string, string[]>(types.map((t) => [t, []]));
  for (const [source, params] of paramsByType) {
    for (const p of params) {
      if (p.type !== 'reference') continue;
      for (const target of p.target ?? types) {
        out.get(target)?.push(`${source}:${p.name}`);
      }
    }
  }
  for (const list of out.values()) list.sort();
  return out;
}

/** One line per operation name, pointing at the definition of its first registration. */
function uniqueOps(ops: OperationEntry[]): { name: string; definition: string }[] {
  const seen = new Map<string, string>();
  for (const op of ops) {
    if (!seen.has(op.name)) {
      seen.set(op.name, op.definition.url as string);
    }
  }
  return [...seen].map(([name, definition]) => ({ name, definition }));
}
