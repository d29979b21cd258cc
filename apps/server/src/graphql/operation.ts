import { badRequest, fail } from '@hearth/core';
import { standardDefinition } from '../operations/definitions/standard.js';
import type { OperationRegistration } from '../operations/registry.js';
import type { OperationInput } from '../operations/types.js';
import type { Logger } from '../platform/logger.js';
import type { SearchService } from '../search/service.js';
import { createGraphqlContext, trackContainer } from './context.js';
import { runGraphql, type GraphqlOptions, type GraphqlRequest } from './execute.js';
import type { FhirGraphqlSchemas } from './schema.js';

export interface GraphqlOperationDeps {
  schemas: () => FhirGraphqlSchemas;
  search: SearchService;
  options: GraphqlOptions;
  logger?: Logger;
}

function parseVariables(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null || value === '') {
    return undefined;
  }
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      fail(badRequest('variables is not valid JSON', 'variables'));
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    fail(badRequest('variables must be a JSON object', 'variables'));
  }
  return parsed as Record<string, unknown>;
}

/**
 * The request as GraphQL over HTTP has it: GET with `query`, `variables` (JSON) and
 * `operationName` parameters; POST with a JSON body of the same names, or an
 * application/graphql body holding the query. Anything else is a malformed request (400).
 */
export function readGraphqlRequest(request: OperationInput): GraphqlRequest {
  let source: Record<string, unknown>;
  if (request.method === 'GET') {
    source = Object.fromEntries(request.query);
  } else if (Buffer.isBuffer(request.body)) {
    const type = (request.headers['content-type'] ?? '').toLowerCase();
    if (!type.startsWith('application/graphql')) {
      fail(badRequest('Send the query as JSON ({"query": ...}) or as application/graphql'));
    }
    source = { query: request.body.toString('utf8') };
  } else if (request.body && typeof request.body === 'object' && !Array.isArray(request.body)) {
    source = request.body as Record<string, unknown>;
  } else {
    fail(badRequest('The request has no GraphQL query: send {"query": "..."}'));
  }
  const query = source.query;
  if (typeof query !== 'string' || query.trim() === '') {
    fail(badRequest('The request has no GraphQL query: send {"query": "..."}', 'query'));
  }
  const operationName = source.operationName;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    fail(badRequest('operationName must be a string', 'operationName'));
  }
  return { query, variables: parseVariables(source.variables), operationName: operationName ?? undefined };
}

/**
 * `$graphql` (hl7.org/fhir/R4/graphql.html): at system level over the whole schema; at instance
 * level (`Patient/123/$graphql`) with the resource as the query root. Always answered as
 * application/json (the result is not a FHIR resource), through the caller's repository.
 */
export function graphqlOperation(deps: GraphqlOperationDeps): OperationRegistration {
  return {
    definition: standardDefinition('Resource-graphql'),
    handler: async (request) => {
      const { target } = request;
      const graphqlRequest = readGraphqlRequest(request);
      const { repo, fhirBase } = request.context;
      const schemas = deps.schemas();
      const context = createGraphqlContext(repo, deps.search, schemas.args, fhirBase);
      let schema = schemas.system;
      let rootValue: unknown;
      if (target.resourceType && target.id) {
        const read = await repo.readResource(target.resourceType, target.id);
        rootValue = trackContainer(context, read.resource);
        schema = schemas.instance(target.resourceType);
      }
      const text = await runGraphql(schema, graphqlRequest, context, {
        ...deps.options,
        method: request.method,
        rootValue,
        logger: deps.logger,
      });
      return { body: text, contentType: 'application/json; charset=utf-8' };
    },
  };
}
