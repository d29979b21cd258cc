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

/** Every SearchParameter the server knows without any project's own: R4's and the platform's. */
export function baseSearchParameters(): SearchParameterResource[] {
  const r4 = readR4File<SearchParameterBundle>('search-parameters.json').entry.map((e) => e.resource);
  const platform = (platformBundle as unknown as SearchParameterBundle).entry.map((e) => e.resource);
  return [...r4, ...platform, COMPARTMENT_PARAM];
}

/**
 * The search parameters every project starts from (R4's and the platform's), each index built on
 * first use and then kept: the search module's SearchParamRegistry owns one per service.
 */
export class BaseSearchParams {
  private byTypeIndex?: ParamsByType;
  private byUrlIndex?: Map<string, SearchParameterResource>;

  /** The definitions by canonical URL. */
  private byUrl(): Map<string, SearchParameterResource> {
    if (!this.byUrlIndex) {
      this.byUrlIndex = new Map();
      for (const sp of baseSearchParameters()) {
        if (sp.url) this.byUrlIndex.set(sp.url, sp);
      }
    }
    return this.byUrlIndex;
  }

  /** True when `url` is the canonical URL of a base parameter. */
  isBase(url: string): boolean {
    return this.byUrl().has(url);
  }

  /** The type of the parameter a composite component's `definition` names. */
  componentType(url: string, extra?: Map<string, SearchParameterResource>): SearchParamType | undefined {
    return (extra?.get(url) ?? this.byUrl().get(url))?.type;
  }

  /** Adds the definitions of `params` to `target`, for every base type they apply to. */
  addParams(
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
        const def = toParamDef(sp, type, (url) => this.componentType(url, extraDefinitions), custom);
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

  /** The parameters of every type. */
  byType(): ParamsByType {
    if (!this.byTypeIndex) {
      const base: ParamsByType = new Map();
      this.addParams(base, baseSearchParameters(), false);
      const compartment = toParamDef(COMPARTMENT_PARAM, 'Resource', () => undefined);
      for (const byCode of base.values()) {
        const own = byCode.get('_compartment');
        if (own && compartment) own.column = 'compartments';
      }
      this.byTypeIndex = base;
    }
    return this.byTypeIndex;
  }
}
