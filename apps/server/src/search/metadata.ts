import type { Queryable } from '../platform/postgres.js';
import type { SearchParamRegistry } from './registry/project-params.js';
import type { ParamDef } from './registry/params.js';

/** A CapabilityStatement.rest.resource.searchParam entry (hl7.org/fhir/R4/capabilitystatement.html). */
export interface SearchParamInfo {
  name: string;
  definition?: string;
  type: ParamDef['type'];
  documentation?: string;
  /** Reference parameters: the types they may point to (undefined: any). */
  target?: string[];
}

function info(p: ParamDef): SearchParamInfo {
  const out: SearchParamInfo = { name: p.code, type: p.type };
  if (p.url) out.definition = p.url;
  if (p.description) out.documentation = p.description;
  if (p.type === 'reference' && p.target) out.target = [...p.target];
  return out;
}

/** Parameters that are listed but cannot be searched (no expression and no column). */
function searchable(p: ParamDef): boolean {
  return Boolean(p.column || p.evaluate || (p.type === 'composite' && p.components?.length));
}

/**
 * The search parameters of a type for a project: the base ones and the project's own
 * SearchParameter resources (GET /metadata lists them; hl7.org/fhir/R4/searchparameter.html).
 */
export async function searchParamsFor(
  registry: SearchParamRegistry,
  db: Queryable,
  resourceType: string,
  projectId?: string,
): Promise<SearchParamInfo[]> {
  if (projectId) {
    await registry.ensure(db, projectId);
  }
  return [...registry.paramsFor(resourceType, projectId).values()]
    .filter(searchable)
    .map(info)
    .sort((a, b) => a.name.localeCompare(b.name));
}
