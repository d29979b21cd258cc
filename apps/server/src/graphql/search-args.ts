import {
  GraphQLEnumType,
  GraphQLInt,
  GraphQLList,
  GraphQLString,
  type GraphQLEnumValueConfigMap,
  type GraphQLFieldConfigArgumentMap,
} from 'graphql';
import type { SearchParamRegistry } from '../search/registry/project-params.js';
import type { ParamDef } from '../search/registry/params.js';
import type { TypedValue } from '../search/extract/path-compiler.js';
import { parseReference, type Resource } from '@hearth/core';
import { searchValueScalar } from './scalars.js';

/**
 * Arguments every search list takes besides the search parameters (hl7.org/fhir/R4/graphql.html#searching),
 * passed to the search as they are. `_filter` is the way to chains, modifiers and AND.
 */
export const LIST_CONTROL_ARGS = ['_count', '_offset', '_sort', '_filter'] as const;
/** A connection also takes the cursor of the page to read. */
export const CONNECTION_CONTROL_ARGS = [...LIST_CONTROL_ARGS, '_cursor'] as const;
/** Arguments that are not search parameters: the spec's `fhirpath`, applied to the matches (resolvers.ts). */
export const FHIRPATH_ARG = 'fhirpath';
const RESERVED = new Set<string>([
  ...CONNECTION_CONTROL_ARGS,
  FHIRPATH_ARG,
  '_reference',
  '_total',
  '_summary',
  '_elements',
  '_include',
  '_revinclude',
  '_contained',
  '_containedType',
]);

/**
 * One search parameter's values as the query gives them (a list is ORed: `_id: [1, 2]`), as one
 * search value. Commas inside a value are escaped: in GraphQL, alternatives are list items.
 */
function orValue(value: unknown): string {
  const items = Array.isArray(value) ? value : [value];
  return items
    .filter((v) => v !== null && v !== undefined)
    .map((v) => String(v).replace(/,/g, '\\,'))
    .join(',');
}

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** The GraphQL argument name of a search parameter: '-' is not allowed in names and becomes '_'. */
export function argName(code: string): string {
  return code.replace(/-/g, '_');
}

interface TypeArgs {
  /** Search parameter arguments (String), with the control arguments of a list. */
  list: GraphQLFieldConfigArgumentMap;
  connection: GraphQLFieldConfigArgumentMap;
  /** Argument name → search parameter code. */
  codes: Map<string, string>;
}

/**
 * The search parameters of each resource type as GraphQL arguments, built from the base
 * parameters (R4 and platform; a project's own SearchParameters are not in the shared schema,
 * they are reachable through REST search). Argument maps are built once per type and shared.
 */
export class SearchArgCatalog {
  private readonly byType = new Map<string, TypeArgs>();
  private readonly referenceEnums = new Map<string, GraphQLEnumType | null>();
  private readonly control: GraphQLFieldConfigArgumentMap = {
    _count: { type: GraphQLInt, description: 'Page size (default 20, at most 1000)' },
    _offset: { type: GraphQLInt, description: 'Matches to skip' },
    _sort: { type: GraphQLString, description: 'Sort order, as the _sort search parameter ("-date,code")' },
    _filter: {
      type: GraphQLString,
      description:
        'A _filter expression (hl7.org/fhir/R4/search_filter.html): chains, modifiers and AND, e.g. "subject.name eq peter and status ne final"',
    },
    [FHIRPATH_ARG]: {
      type: GraphQLString,
      description: 'A FHIRPath condition each match must meet, applied to the page the search returns',
    },
  };

  constructor(private readonly registry: SearchParamRegistry) {}

  private build(resourceType: string): TypeArgs {
    let built = this.byType.get(resourceType);
    if (built) {
      return built;
    }
    const codes = new Map<string, string>();
    const params: GraphQLFieldConfigArgumentMap = {};
    const sorted = [...this.registry.paramsFor(resourceType).values()].sort((a, b) => a.code.localeCompare(b.code));
    for (const param of sorted) {
      const name = argName(param.code);
      if (!GRAPHQL_NAME.test(name) || RESERVED.has(name) || codes.has(name)) {
        continue;
      }
      codes.set(name, param.code);
      params[name] = { type: new GraphQLList(searchValueScalar(param.type)), description: param.description };
    }
    const control = this.control;
    built = {
      list: { ...control, ...params },
      connection: {
        ...control,
        _cursor: { type: GraphQLString, description: 'A cursor from a connection (first, next, previous, last)' },
        ...params,
      },
      codes,
    };
    this.byType.set(resourceType, built);
    return built;
  }

  /** `_count`, `_offset`, `_sort`, `_filter` and `fhirpath`, without the search parameters. */
  controlArgs(): GraphQLFieldConfigArgumentMap {
    return this.control;
  }

  listArgs(resourceType: string): GraphQLFieldConfigArgumentMap {
    return this.build(resourceType).list;
  }

  connectionArgs(resourceType: string): GraphQLFieldConfigArgumentMap {
    return this.build(resourceType).connection;
  }

  /** The search parameter code an argument stands for. */
  code(resourceType: string, arg: string): string | undefined {
    return this.build(resourceType).codes.get(arg);
  }

  /**
   * The reference parameters of `sourceType` that may point at `targetType` through an explicit
   * target list: the parameters a reverse reference (`_reference`) can name inside `targetType`.
   */
  referenceParams(sourceType: string, targetType: string): ParamDef[] {
    return [...this.registry.paramsFor(sourceType).values()].filter(
      (p) => p.type === 'reference' && p.target?.includes(targetType),
    );
  }

  /** True when `code` is a reference parameter of `sourceType` that may point at `targetType`. */
  canTarget(sourceType: string, code: string, targetType: string): boolean {
    const param = this.registry.get(sourceType, code);
    return param?.type === 'reference' && (!param.target || param.target.includes(targetType));
  }

  /**
   * The local references ('Patient/1') a resource holds under a reference parameter, as the
   * indexer reads them (the parameter's expression); versions and this server's base dropped.
   */
  referencesOf(sourceType: string, code: string, resource: Resource, fhirBase: string): string[] {
    const param = this.registry.get(sourceType, code);
    if (!param?.evaluate) {
      return [];
    }
    let values: TypedValue[];
    try {
      values = param.evaluate([{ value: resource, type: resource.resourceType }], resource as Record<string, unknown>);
    } catch {
      return [];
    }
    const refs: string[] = [];
    for (const { value } of values) {
      const text = typeof value === 'string' ? value : (value as { reference?: unknown } | null)?.reference;
      if (typeof text !== 'string') continue;
      const local = text.startsWith(fhirBase) ? text.slice(fhirBase.length) : text;
      if (/^[a-z][a-z0-9+.-]*:/i.test(local)) continue; // another server's URL, a urn
      const target = parseReference(local);
      if (target) refs.push(`${target.resourceType}/${target.id}`);
    }
    return refs;
  }

  /** `_reference` values of a reverse reference from `sourceType`: its reference parameters, as an enum. */
  referenceEnum(sourceType: string): GraphQLEnumType | undefined {
    let e = this.referenceEnums.get(sourceType);
    if (e === undefined) {
      const values: GraphQLEnumValueConfigMap = {};
      for (const param of this.registry.paramsFor(sourceType).values()) {
        const name = argName(param.code);
        if (param.type === 'reference' && GRAPHQL_NAME.test(name) && !(name in values)) {
          values[name] = { value: param.code };
        }
      }
      e =
        Object.keys(values).length > 0
          ? new GraphQLEnumType({ name: `${sourceType}ReferenceParameter`, values })
          : null;
      this.referenceEnums.set(sourceType, e);
    }
    return e ?? undefined;
  }

  /**
   * The FHIR search query of a list field's arguments: each search parameter argument by its
   * code, its list of values ORed; the control arguments as they are. Null and undefined
   * arguments, and empty lists, are left out.
   */
  toSearchParams(resourceType: string, args: Record<string, unknown>): URLSearchParams {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(args)) {
      if (value === null || value === undefined || name === '_reference' || name === '_cursor') {
        continue;
      }
      if ((LIST_CONTROL_ARGS as readonly string[]).includes(name)) {
        params.append(name, String(value));
        continue;
      }
      const code = this.code(resourceType, name);
      const text = code === undefined ? '' : orValue(value);
      if (code && text !== '') {
        params.append(code, text);
      }
    }
    return params;
  }
}
