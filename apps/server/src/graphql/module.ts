import type { Config } from '../config/schema.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { Logger } from '../platform/logger.js';
import type { SearchService } from '../search/service.js';
import type { SearchParamRegistry } from '../search/registry/project-params.js';
import { graphqlOperation } from './operation.js';
import { fhirGraphqlSchemasOnce, type FhirGraphqlSchemas } from './schema.js';

export interface GraphqlModuleDeps {
  config: Config;
  search: SearchService;
  /** The search parameters: the schema's search arguments are the base ones. */
  params: SearchParamRegistry;
  logger?: Logger;
}

/** FHIR GraphQL (hl7.org/fhir/R4/graphql.html): the `$graphql` operation (its HTTP extras: fhir/graphiql-routes.ts). */
export interface GraphqlModule {
  /** Registers `$graphql` (system and instance level). */
  registerOperations(registry: OperationRegistry): void;
  /** The schemas, built on first call and kept by this module. */
  schemas(): FhirGraphqlSchemas;
}

export function createGraphqlModule(deps: GraphqlModuleDeps): GraphqlModule {
  const { config } = deps;
  const fhirGraphqlSchemas = fhirGraphqlSchemasOnce(deps.params);
  return {
    registerOperations(registry) {
      registry.register(
        graphqlOperation({
          schemas: fhirGraphqlSchemas,
          search: deps.search,
          logger: deps.logger,
          options: {
            introspection: config.graphqlIntrospection,
            maxDepth: config.graphqlMaxDepth,
            maxCost: config.graphqlMaxCost,
          },
        }),
      );
    },
    schemas: fhirGraphqlSchemas,
  };
}
