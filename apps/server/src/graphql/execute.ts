import {
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { fail, methodNotAllowed, operationOutcomeToString } from '@hearth/core';
import { errorToOutcome } from '../errors/to-outcome.js';
import type { Logger } from '../platform/logger.js';
import type { GraphqlContext } from './context.js';
import { applyShapingDirectives } from './directives.js';
import { checkLimits, checkNesting, type QueryLimits } from './limits.js';

/** A GraphQL request (graphql.org/learn/serving-over-http). */
export interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

export interface GraphqlOptions extends QueryLimits {
  introspection: boolean;
}

export interface GraphqlResponse {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
}

/** Most tokens in one query document: parsing is bounded before anything else runs. */
const MAX_TOKENS = 50_000;

/**
 * Answers of introspection-only queries, per schema: they are the same for every caller and
 * large (GraphiQL's introspection of the whole schema is about 17 MB and seconds of CPU), so
 * each distinct query is answered once per schema.
 */
const introspectionCache = new WeakMap<GraphQLSchema, Map<string, string>>();
const MAX_CACHED_INTROSPECTIONS = 16;

function isIntrospectionOnly(
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
): boolean {
  const only = (set: SelectionSetNode): boolean =>
    set.selections.every((s) =>
      s.kind === Kind.FIELD
        ? s.name.value.startsWith('__')
        : s.kind === Kind.INLINE_FRAGMENT
          ? only(s.selectionSet)
          : fragments[s.name.value] !== undefined && only(fragments[s.name.value].selectionSet),
    );
  return operation.operation === 'query' && only(operation.selectionSet);
}

/**
 * Parses, validates, checks the limits, executes and shapes one request; returns the response
 * as JSON text. Syntax, validation and resolver errors are answered in `errors` (HTTP 200, per
 * GraphQL over HTTP); a query past the depth or cost limits, or a mutation sent by GET, throws
 * an OperationOutcomeError instead.
 */
export async function runGraphql(
  schema: GraphQLSchema,
  request: GraphqlRequest,
  ctx: GraphqlContext,
  options: GraphqlOptions & { method: string; rootValue?: unknown; logger?: Logger },
): Promise<string> {
  const prepared = prepare(schema, request, options);
  if ('errors' in prepared) {
    return JSON.stringify(prepared);
  }
  const { operation, fragments } = prepared;
  if (!isIntrospectionOnly(operation, fragments)) {
    return JSON.stringify(await executeOperation(schema, request, ctx, options, prepared));
  }
  let cache = introspectionCache.get(schema);
  if (!cache) {
    cache = new Map();
    introspectionCache.set(schema, cache);
  }
  const key = JSON.stringify([request.query, request.operationName ?? null, request.variables ?? null]);
  let text = cache.get(key);
  if (text === undefined) {
    text = JSON.stringify(await executeOperation(schema, request, ctx, options, prepared));
    if (cache.size >= MAX_CACHED_INTROSPECTIONS) {
      cache.delete(cache.keys().next().value as string);
    }
    cache.set(key, text);
  }
  return text;
}

/**
 * Parsed and validated documents, per schema and query text: clients send the same few queries
 * with other variables, and validating against this large schema costs milliseconds.
 */
const documentCache = new WeakMap<
  GraphQLSchema,
  Map<string, { document: DocumentNode } | { errors: GraphQLFormattedError[] }>
>();
const MAX_CACHED_DOCUMENTS = 500;

function parseAndValidate(
  schema: GraphQLSchema,
  query: string,
  introspection: boolean,
): { document: DocumentNode } | { errors: GraphQLFormattedError[] } {
  let cache = documentCache.get(schema);
  if (!cache) {
    cache = new Map();
    documentCache.set(schema, cache);
  }
  const key = `${introspection ? 1 : 0}${query}`;
  let checked = cache.get(key);
  if (checked) {
    // Most recently used last: the first key is the one to evict.
    cache.delete(key);
    cache.set(key, checked);
    return checked;
  }
  checkNesting(query);
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: MAX_TOKENS });
  } catch (err) {
    if (err instanceof GraphQLError) {
      return { errors: [err.toJSON()] };
    }
    throw err;
  }
  const rules = introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
  const invalid = validate(schema, document, rules);
  checked = invalid.length > 0 ? { errors: invalid.map((e) => e.toJSON()) } : { document };
  if (query.length <= 20_000) {
    if (cache.size >= MAX_CACHED_DOCUMENTS) {
      cache.delete(cache.keys().next().value as string);
    }
    cache.set(key, checked);
  }
  return checked;
}

interface Prepared {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  fragments: Record<string, FragmentDefinitionNode>;
}

/** Parse, validation, the operation to run, the method and the limits: everything before execution. */
function prepare(
  schema: GraphQLSchema,
  request: GraphqlRequest,
  options: GraphqlOptions & { method: string },
): Prepared | { errors: GraphQLFormattedError[] } {
  const checked = parseAndValidate(schema, request.query, options.introspection);
  if ('errors' in checked) {
    return checked;
  }
  const { document } = checked;
  const operation = getOperationAST(document, request.operationName);
  if (!operation) {
    const message = request.operationName
      ? `No operation named "${request.operationName}" in the query`
      : 'The query has several operations: give operationName';
    return { errors: [{ message }] };
  }
  if (operation.operation !== 'query' && options.method !== 'POST') {
    fail(methodNotAllowed(`A GraphQL ${operation.operation} must be sent by POST`));
  }
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments[definition.name.value] = definition;
    }
  }
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
  if (variables.errors) {
    return { errors: variables.errors.map((e) => e.toJSON()) };
  }
  checkLimits(schema, operation, fragments, variables.coerced, options);
  return { document, operation, fragments };
}

async function executeOperation(
  schema: GraphQLSchema,
  request: GraphqlRequest,
  ctx: GraphqlContext,
  options: { rootValue?: unknown; logger?: Logger },
  { document, operation, fragments }: Prepared,
): Promise<GraphqlResponse> {
  const result = await execute({
    schema,
    document,
    rootValue: options.rootValue ?? {},
    contextValue: ctx,
    variableValues: request.variables,
    operationName: request.operationName,
  });
  const errors = [...(result.errors ?? [])];
  const data = applyShapingDirectives(
    operation,
    fragments,
    result.data as Record<string, unknown> | null,
    errors,
    request.variables ?? {},
    ctx.slices,
  );
  const response: GraphqlResponse = { data };
  if (errors.length > 0) {
    response.errors = errors.map((e) => formatError(e, options.logger));
  }
  return response;
}

/**
 * A resolver's error as a GraphQL error: a FHIR error keeps its message and carries its
 * OperationOutcome and status in `extensions`; anything unexpected is logged and shown as an
 * internal error (its message may hold internals), as errors/to-outcome.ts does for REST.
 */
function formatError(error: GraphQLError, logger: Logger | undefined): GraphQLFormattedError {
  const json = error.toJSON();
  const original = error.originalError;
  if (!original || original instanceof GraphQLError) {
    return json;
  }
  const mapped = errorToOutcome(original);
  if (mapped.unexpected) {
    logger?.error({ err: original, path: error.path }, 'unexpected error in a GraphQL resolver');
  }
  return {
    ...json,
    message: operationOutcomeToString(mapped.outcome),
    extensions: { ...json.extensions, status: mapped.status, outcome: mapped.outcome },
  };
}
