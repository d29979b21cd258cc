import {
  DirectiveLocation,
  GraphQLDirective,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  specifiedDirectives,
  type GraphQLArgument,
  type GraphQLResolveInfo,
  type GraphQLFieldConfigArgumentMap,
} from 'graphql';
import { getSchema, isResourceType } from '@hearth/definitions';
import { getAllResourceTypes } from '@hearth/definitions';
import type { SearchParamRegistry } from '../search/registry/project-params.js';
import type { GraphqlContext } from './context.js';
import { recordSlices } from './directives.js';
import { createMutation, deleteMutation, updateMutation } from './mutations.js';
import { readById, searchConnection, searchList } from './resolvers.js';
import { reverseConnection, reverseList } from './reverse.js';
import { FilterValueScalar } from './scalars.js';
import { SearchArgCatalog } from './search-args.js';
import { costExtension, FhirGraphqlTypes, type BuiltFieldMap, type FieldMap } from './types.js';
import type { Resource } from '@hearth/core';

/** The shaping directives of hl7.org/fhir/R4/graphql.html#directives (@flatten, @first, @singleton, @slice), applied by directives.ts. */
export const SHAPING_DIRECTIVES = [
  new GraphQLDirective({
    name: 'flatten',
    description: 'Leave this field out and put its children in the parent; repeated children become lists',
    locations: [DirectiveLocation.FIELD],
  }),
  new GraphQLDirective({
    name: 'first',
    description: 'Only the first item of a list, as a single value',
    locations: [DirectiveLocation.FIELD],
  }),
  new GraphQLDirective({
    name: 'singleton',
    description: 'A single value rather than a list (an error when there is more than one)',
    locations: [DirectiveLocation.FIELD],
  }),
  new GraphQLDirective({
    name: 'slice',
    description:
      'Each item of the list under its own key, suffixed with "." and the value of `path` (a FHIRPath, or $index) on the item',
    locations: [DirectiveLocation.FIELD],
    // Any literal, so that the spec's bare form (`telecom @slice(path: use)`) is accepted too.
    args: { path: { type: new GraphQLNonNull(FilterValueScalar) } },
  }),
];

/** A list resolver's result, with its `@slice` suffixes recorded (directives.ts). */
function sliced<T>(ctx: GraphqlContext, info: GraphQLResolveInfo, items: T[]): T[] {
  recordSlices(ctx.slices, info, items);
  return items;
}

/** The GraphQL schemas of the FHIR types: the system one and one per resource type (instance level). */
export interface FhirGraphqlSchemas {
  system: GraphQLSchema;
  /** `[type]/[id]/$graphql`: the resource is the query root (built on first use). */
  instance(resourceType: string): GraphQLSchema;
  args: SearchArgCatalog;
}

interface Referrer {
  source: string;
  /** True when one of the source's parameters names this type among a few targets (not "any resource"). */
  specific: boolean;
}

/** The source types whose reference parameters can point at each type (for reverse references). */
function referrers(catalog: SearchArgCatalog, resourceTypes: string[]): Map<string, Referrer[]> {
  const byTarget = new Map<string, Referrer[]>();
  const anyResource = resourceTypes.length / 2;
  for (const source of resourceTypes) {
    for (const target of resourceTypes) {
      const params = catalog.referenceParams(source, target);
      if (params.length > 0) {
        const specific = params.some((p) => (p.target?.length ?? 0) <= anyResource);
        byTarget.set(target, [...(byTarget.get(target) ?? []), { source, specific }]);
      }
    }
  }
  return byTarget;
}

function connectionType(types: FhirGraphqlTypes, resourceType: string): GraphQLObjectType {
  const edge = new GraphQLObjectType({
    name: `${resourceType}Edge`,
    fields: {
      mode: { type: GraphQLString, description: 'match or include' },
      score: { type: GraphQLFloat },
      resource: { type: types.objectType(resourceType) },
    },
  });
  return new GraphQLObjectType({
    name: `${resourceType}Connection`,
    description: `One page of a ${resourceType} search, with cursors to the others`,
    fields: {
      count: { type: GraphQLInt, description: 'Number of matches (computed only when selected)' },
      offset: { type: GraphQLInt },
      pagesize: { type: GraphQLInt },
      first: { type: GraphQLString },
      previous: { type: GraphQLString },
      next: { type: GraphQLString },
      last: { type: GraphQLString },
      edges: { type: new GraphQLList(edge) },
    },
  });
}

/**
 * Arguments as graphql-js defines them from a config (type/definition.ts defineArguments),
 * without descriptions: reverse references repeat the arguments of the root list fields.
 */
function toArguments(config: GraphQLFieldConfigArgumentMap): GraphQLArgument[] {
  return Object.entries(config).map(([name, arg]) => ({
    name,
    description: undefined,
    type: arg.type,
    defaultValue: arg.defaultValue,
    deprecationReason: arg.deprecationReason,
    extensions: arg.extensions ?? {},
    astNode: arg.astNode,
  }));
}

/** Builds the schemas from the type schema and the base search parameters (of `params`). */
export function buildFhirGraphqlSchemas(params: SearchParamRegistry): FhirGraphqlSchemas {
  const catalog = new SearchArgCatalog(params);
  const stored = new Set(getAllResourceTypes());
  const resourceTypes = getAllResourceTypes().filter((t) => isResourceType(t) && stored.has(t));
  const sourcesOf = referrers(catalog, resourceTypes);

  // Reverse references (hl7.org/fhir/R4/graphql.html#reverse): one field per (target, source)
  // pair. A source that names the target among a few reference targets (Observation.subject:
  // Patient, Group, Device, Location) takes all its search parameters; a source that refers to
  // any resource (Provenance.target, AuditEvent.entity, List.item...: ~4,800 pairs) only `_count`,
  // which keeps the schema's introspection (GraphiQL loads it) in the low tens of megabytes.
  // Each source's arguments are built once and shared by its fields (see ResourceObjectType).
  const connections = new Map<string, GraphQLObjectType>();
  const connectionOf = (resourceType: string): GraphQLObjectType => {
    let type = connections.get(resourceType);
    if (!type) {
      type = connectionType(types, resourceType);
      connections.set(resourceType, type);
    }
    return type;
  };
  interface ReverseFields {
    list: GraphQLList<GraphQLObjectType>;
    args: GraphQLArgument[];
    description: string;
    /** Connections (`ObservationConnection(_reference: subject)`): only for specific referrers. */
    connection?: { type: GraphQLObjectType; args: GraphQLArgument[] };
  }
  const shared = new Map<string, ReverseFields | null>();
  const reverseOf = (source: string, specific: boolean) => {
    const key = `${source}|${specific}`;
    let entry = shared.get(key);
    if (entry === undefined) {
      const referenceEnum = catalog.referenceEnum(source);
      const { _count } = catalog.listArgs(source);
      const reference = { _reference: { type: new GraphQLNonNull(referenceEnum ?? GraphQLString) } };
      entry = referenceEnum
        ? {
            list: new GraphQLList(types.objectType(source)),
            description: `${source}s referring here by the _reference parameter${specific ? `; filters as ${source}List` : ''}`,
            args: toArguments({ ...reference, ...(specific ? catalog.listArgs(source) : { _count }) }),
            // The paging and control arguments only (search parameters through _filter): with every
            // search parameter, these ~700 fields would add ~4.5 MB to the introspection. Without
            // _cursor: cursors are followed at the root (hl7.org/fhir/R4/graphql.html#reverse).
            connection: specific
              ? { type: connectionOf(source), args: toArguments({ ...reference, ...catalog.controlArgs() }) }
              : undefined,
          }
        : null;
      shared.set(key, entry);
    }
    return entry;
  };
  const reverseFields = (resourceType: string): BuiltFieldMap => {
    const fields: BuiltFieldMap = {};
    for (const { source, specific } of sourcesOf.get(resourceType) ?? []) {
      const entry = reverseOf(source, specific);
      if (!entry) continue;
      const name = `${source}List`;
      fields[name] = {
        name,
        description: entry.description,
        type: entry.list,
        args: entry.args,
        resolve: async (focus, args, ctx, info) =>
          sliced(ctx, info, await reverseList(source, focus as unknown as Resource, args, ctx)),
        subscribe: undefined,
        deprecationReason: undefined,
        extensions: costExtension('search'),
        astNode: undefined,
      };
      if (entry.connection) {
        const connectionName = `${source}Connection`;
        fields[connectionName] = {
          name: connectionName,
          description: `A page of ${source}s referring here by the _reference parameter, with its cursors`,
          type: entry.connection.type,
          args: entry.connection.args,
          resolve: (focus, args, ctx, info) => reverseConnection(source, focus as unknown as Resource, args, ctx, info),
          subscribe: undefined,
          deprecationReason: undefined,
          extensions: costExtension('connection'),
          astNode: undefined,
        };
      }
    }
    return fields;
  };
  const types: FhirGraphqlTypes = new FhirGraphqlTypes(getSchema(), resourceTypes, reverseFields);

  const query: FieldMap = {};
  const mutation: FieldMap = {};
  for (const type of resourceTypes) {
    const object = types.objectType(type);
    query[type] = {
      type: object,
      args: { id: { type: new GraphQLNonNull(GraphQLID) } },
      extensions: costExtension('read'),
      resolve: (_root, args, ctx) => readById(type, args, ctx),
    };
    query[`${type}List`] = {
      type: new GraphQLList(object),
      args: catalog.listArgs(type),
      extensions: costExtension('search'),
      resolve: async (_root, args, ctx, info) => sliced(ctx, info, await searchList(type, args, ctx)),
    };
    query[`${type}Connection`] = {
      type: connectionOf(type),
      args: catalog.connectionArgs(type),
      extensions: costExtension('connection'),
      resolve: (_root, args, ctx, info) => searchConnection(type, args, ctx, info),
    };
    const res = { type: new GraphQLNonNull(types.input(type)) };
    mutation[`${type}Create`] = {
      type: object,
      args: { res },
      extensions: costExtension('write'),
      resolve: (_root, args, ctx) => createMutation(type, args, ctx),
    };
    mutation[`${type}Update`] = {
      type: object,
      args: { id: { type: new GraphQLNonNull(GraphQLID) }, res },
      extensions: costExtension('write'),
      resolve: (_root, args, ctx) => updateMutation(type, args, ctx),
    };
    mutation[`${type}Delete`] = {
      type: object,
      args: { id: { type: new GraphQLNonNull(GraphQLID) } },
      extensions: costExtension('write'),
      resolve: (_root, args, ctx) => deleteMutation(type, args, ctx),
    };
  }
  const directives = [...specifiedDirectives, ...SHAPING_DIRECTIVES];
  const system = new GraphQLSchema({
    query: new GraphQLObjectType<Record<string, unknown>, GraphqlContext>({ name: 'Query', fields: query }),
    mutation: new GraphQLObjectType<Record<string, unknown>, GraphqlContext>({ name: 'Mutation', fields: mutation }),
    directives,
  });
  const instances = new Map<string, GraphQLSchema>();
  return {
    system,
    args: catalog,
    instance(resourceType) {
      let schema = instances.get(resourceType);
      if (!schema) {
        schema = new GraphQLSchema({ query: types.objectType(resourceType), types: [types.resourceUnion], directives });
        instances.set(resourceType, schema);
      }
      return schema;
    },
  };
}

/**
 * The schemas, built on the first call and then kept by the GraphQL module that made this: they
 * depend only on the type schema and the base search parameters, the same for every project.
 */
export function fhirGraphqlSchemasOnce(params: SearchParamRegistry): () => FhirGraphqlSchemas {
  let built: FhirGraphqlSchemas | undefined;
  return () => (built ??= buildFhirGraphqlSchemas(params));
}
