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
} from 'graphql';
import { fail, methodNotAllowed, operationOutcomeToString } from '@hearth/core';
import { errorToOutcome } from '../errors/to-outcome.js';
import type { Logger } from '../platform/logger.js';
import type { GraphqlContext } from './context.js';
import { applyShapingDirectives } from './directives.js';
import { checkLimits, type QueryLimits } from './limits.js';

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
 * Parses, validates, checks the limits, executes and shapes one request. Syntax, validation and
 * resolver errors are answered in `errors` (HTTP 200, per GraphQL over HTTP); a query past the
 * depth or cost limits, or a mutation sent by GET, throws an OperationOutcomeError instead.
 */
export async function runGraphql(
  schema: GraphQLSchema,
  request: GraphqlRequest,
  ctx: GraphqlContext,
  options: GraphqlOptions & { method: string; rootValue?: unknown; logger?: Logger },
): Promise<GraphqlResponse> {
  let document: DocumentNode;
  try {
    document = parse(request.query, { maxTokens: MAX_TOKENS });
  } catch (err) {
    if (err instanceof GraphQLError) {
      return { errors: [err.toJSON()] };
    }
    throw err;
  }
  const rules = options.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
  const invalid = validate(schema, document, rules);
  if (invalid.length > 0) {
    return { errors: invalid.map((e) => e.toJSON()) };
  }
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

  const result = await execute({
    schema,
    document,
    rootValue: options.rootValue ?? {},
    contextValue: ctx,
    variableValues: request.variables,
    operationName: request.operationName,
  });
  const errors = [...(result.errors ?? [])];
  const data = applyShapingDirectives(operation, fragments, result.data as Record<string, unknown> | null, errors);
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
