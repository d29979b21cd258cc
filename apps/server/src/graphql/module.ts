import type { FastifyInstance } from 'fastify';
import { findAppDist } from '../app-static/plugin.js';
import { appBaseUrl } from '../auth/deps.js';
import type { Config } from '../config/schema.js';
import type { OperationRegistry } from '../fhir/operations/registry.js';
import type { Logger } from '../platform/logger.js';
import type { SearchService } from '../search/service.js';
import type { SearchParamRegistry } from '../search/registry/project-params.js';
import { graphiqlRoutes } from './graphiql.js';
import { graphqlOperation } from './operation.js';
import { fhirGraphqlSchemasOnce, type FhirGraphqlSchemas } from './schema.js';

export interface GraphqlModuleDeps {
  config: Config;
  search: SearchService;
  /** The search parameters: the schema's search arguments are the base ones. */
  params: SearchParamRegistry;
  logger?: Logger;
}

/** FHIR GraphQL (hl7.org/fhir/R4/graphql.html): the `$graphql` operation and the GraphiQL page. */
export interface GraphqlModule {
  /** Registers `$graphql` (system and instance level). */
  registerOperations(registry: OperationRegistry): void;
  /** HTTP routes outside the FHIR plugin (`$graphiql`, a redirect to the app's GraphiQL); register under the FHIR base prefix. */
  routes(app: FastifyInstance): Promise<void>;
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
    async routes(app) {
      if (config.graphiqlEnabled) {
        // The app's GraphiQL page: where HEARTH_APP_BASE_URL says, or this server when it serves the app.
        const appUrl = config.appBaseUrl || findAppDist() ? appBaseUrl(config) : undefined;
        await graphiqlRoutes(app, { appUrl });
      }
      // The schema is built once at start-up, once the server listens (so that it
      // does not delay start-up, and apps that never listen, like most tests, never build it).
      app.addHook('onListen', async () => {
        setImmediate(() => {
          const started = performance.now();
          fhirGraphqlSchemas();
          deps.logger?.debug({ ms: Math.round(performance.now() - started) }, 'GraphQL schema built');
        });
      });
    },
    schemas: fhirGraphqlSchemas,
  };
}
