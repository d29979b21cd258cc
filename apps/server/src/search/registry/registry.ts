import { getAllResourceTypes, readR4File } from '@hearth/definitions';
import type { SearchParamType } from '@hearth/core';
import platformBundle from '../platform-search-parameters.json' with { type: 'json' };
import { toParamDef, type ParamDef, type SearchParameterResource } from './params.js';

interface SearchParameterBundle {
  entry: { resource: SearchParameterResource }[];
}

/** The parameters of each resource type, keyed by code. */
export type ParamsByType = Map<string, Map<string, ParamDef>>;

/** Medplum's extension, also handy for access policies: `_compartment=Patient/123`. */
const COMPARTMENT_PARAM: SearchParameterResource = {
  resourceType: 'SearchParameter',
  url: 'https://hearth.dev/fhir/SearchParameter/Resource-compartment',
  code: '_compartment',
  base: ['Resource'],
  type: 'reference',
  description: 'The compartments (Patient/123) the resource belongs to',
};

let base: ParamsByType | undefined;
let definitionsByUrl: Map<string, SearchParameterResource> | undefined;

/** Every SearchParameter the server knows without any project's own: R4's and the platform's. */
export function baseSearchParameters(): SearchParameterResource[] {
  const r4 = readR4File<SearchParameterBundle>('search-parameters.json').entry.map((e) => e.resource);
  const platform = (platformBundle as unknown as SearchParameterBundle).entry.map((e) => e.resource);
  return [...r4, ...platform, COMPARTMENT_PARAM];
}

function definitionIndex(): Map<string, SearchParameterResource> {
  if (!definitionsByUrl) {
    definitionsByUrl = new Map();
    for (const sp of baseSearchParameters()) {
      if (sp.url) definitionsByUrl.set(sp.url, sp);
    }
  }
  return definitionsByUrl;
}

/** The type of the parameter a composite component's `definition` names. */
export function componentType(url: string, extra?: Map<string, SearchParameterResource>): SearchParamType | undefined {
  return (extra?.get(url) ?? definitionIndex().get(url))?.type;
}

/** Adds the definitions of `params` to `target`, for every base type they apply to. */
export function addParams(
  target: ParamsByType,
  params: SearchParameterResource[],
  custom: boolean,
  extraDefinitions?: Map<string, SearchParameterResource>,
): void {
  const allTypes = getAllResourceTypes();
  for (const sp of params) {
    if (!sp.code || !Array.isArray(sp.base)) continue;
    const types = sp.base.flatMap((b) => (b === 'Resource' || b === 'DomainResource' ? allTypes : [b]));
    for (const type of types) {
      const def = toParamDef(sp, type, (url) => componentType(url, extraDefinitions), custom);
      if (!def) continue;
      let byCode = target.get(type);
      if (!byCode) {
        byCode = new Map();
        target.set(type, byCode);
      }
      byCode.set(def.code, def);
    }
  }
}

/** The parameters of every type, built once per process. */
export function baseParams(): ParamsByType {
  if (!base) {
    base = new Map();
    addParams(base, baseSearchParameters(), false);
    const compartment = toParamDef(COMPARTMENT_PARAM, 'Resource', () => undefined);
    for (const byCode of base.values()) {
      const own = byCode.get('_compartment');
      if (own && compartment) own.column = 'compartments';
    }
  }
  return base;
}

/** One parameter of a type from the base definitions. */
export function getBaseParam(resourceType: string, code: string): ParamDef | undefined {
  return baseParams().get(resourceType)?.get(code);
}
