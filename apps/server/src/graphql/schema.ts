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
  type GraphQLFieldConfigArgumentMap,
} from 'graphql';
import { getSchema, isResourceType } from '@hearth/definitions';
import { getAllResourceTypes } from '@hearth/definitions';
import { SearchParamRegistry } from '../search/registry/project-params.js';
import type { GraphqlContext } from './context.js';
import { createMutation, deleteMutation, updateMutation } from './mutations.js';
import { readById, reverseList, searchConnection, searchList } from './resolvers.js';
import { SearchArgCatalog } from './search-args.js';
import { costExtension, FhirGraphqlTypes, type BuiltFieldMap, type FieldMap } from './types.js';
import type { Resource } from '@hearth/core';

/** The shaping directives of hl7.org/fhir/R4/graphql.html#directives, applied by directives.ts. */
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
];

/** The GraphQL schemas of the FHIR types: the system one and one per resource type (instance level). */
export interface FhirGraphqlSchemas {
  system: GraphQLSchema;
  /** `[type]/[id]/$graphql`: the resource is the query root (built on first use). */
  instance(resourceType: string): GraphQLSchema;
  args: SearchArgCatalog;
}

/** The source types whose reference parameters can point at each type (for reverse references). */
function referrers(catalog: SearchArgCatalog, resourceTypes: string[]): Map<string, string[]> {
  const byTarget = new Map<string, string[]>();
  for (const source of resourceTypes) {
    for (const target of resourceTypes) {
      if (catalog.referenceCodes(source, target).length > 0) {
        byTarget.set(target, [...(byTarget.get(target) ?? []), source]);
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

/** Arguments as graphql-js defines them from a config (type/definition.ts defineArguments). */
function toArguments(config: GraphQLFieldConfigArgumentMap): GraphQLArgument[] {
  return Object.entries(config).map(([name, arg]) => ({
    name,
    description: arg.description,
    type: arg.type,
    defaultValue: arg.defaultValue,
    deprecationReason: arg.deprecationReason,
    extensions: arg.extensions ?? {},
    astNode: arg.astNode,
  }));
}

/** Builds the schemas from the type schema and the base search parameters. */
export function buildFhirGraphqlSchemas(): FhirGraphqlSchemas {
  const catalog = new SearchArgCatalog(new SearchParamRegistry());
  const stored = new Set(getAllResourceTypes());
  const resourceTypes = getAllResourceTypes().filter((t) => isResourceType(t) && stored.has(t));
  const sourcesOf = referrers(catalog, resourceTypes);

  // Reverse references: one field per (target, source) pair, thousands in all; each source's
  // arguments are built once and shared by its fields (see ResourceObjectType).
  const reverseArgs = new Map<string, { list: GraphQLList<GraphQLObjectType>; args: GraphQLArgument[] } | null>();
  const reverseOf = (source: string) => {
    let shared = reverseArgs.get(source);
    if (shared === undefined) {
      const referenceEnum = catalog.referenceEnum(source);
      shared = referenceEnum
        ? {
            list: new GraphQLList(types.objectType(source)),
            args: toArguments({
              _reference: { type: new GraphQLNonNull(referenceEnum), description: 'The parameter that refers here' },
              ...catalog.listArgs(source),
            }),
          }
        : null;
      reverseArgs.set(source, shared);
    }
    return shared;
  };
  const reverseFields = (resourceType: string): BuiltFieldMap => {
    const fields: BuiltFieldMap = {};
    for (const source of sourcesOf.get(resourceType) ?? []) {
      const shared = reverseOf(source);
      if (!shared) continue;
      const name = `${source}List`;
      fields[name] = {
        name,
        description: `${source} resources that refer to this ${resourceType} through the _reference parameter`,
        type: shared.list,
        args: shared.args,
        resolve: (focus, args, ctx) => reverseList(source, focus as unknown as Resource, args, ctx),
        subscribe: undefined,
        deprecationReason: undefined,
        extensions: costExtension('search'),
        astNode: undefined,
      };
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
      resolve: (_root, args, ctx) => searchList(type, args, ctx),
    };
    query[`${type}Connection`] = {
      type: connectionType(types, type),
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

let built: FhirGraphqlSchemas | undefined;

/**
 * The schemas, built once per process: they depend only on the type schema and the base search
 * parameters, which are the same for every project and every app in the process.
 */
export function fhirGraphqlSchemas(): FhirGraphqlSchemas {
  built ??= buildFhirGraphqlSchemas();
  return built;
}
