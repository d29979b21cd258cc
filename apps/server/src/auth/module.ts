import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.js';
import type { FhirContextFactory } from './context-factory.js';
import type { FhirContext } from '../operations/context.js';
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import { createMailer, type Mailer } from '../platform/email.js';
import { OutboundPolicy } from '../platform/outbound-http.js';
import type { SearchModule } from '../search/service.js';
import { Repository } from '../storage/repository.js';
import type { RepositoryDeps, RepositoryScope } from '../storage/types.js';
import { Authenticator, type RequestAuth } from './authenticate.js';
import { bootstrapSuperAdmin, type BootstrapResult } from './bootstrap.js';
import { searchCriteriaCompiler } from './access/search-criteria.js';
import type { AuthDeps } from './deps.js';
import { KeyStore } from './keys.js';

export interface AuthModule {
  deps: AuthDeps;
  keys: KeyStore;
  authenticator: Authenticator;
  /** The FHIR context of a request: its repository scoped to the caller (401 without credentials). */
  contextFor: FhirContextFactory;
  /** The caller a context of contextFor acts for; undefined for an anonymous one (public routes). */
  callerOf(context: FhirContext): RequestAuth | undefined;
  bootstrap: BootstrapResult;
  /** Searches in a caller's repository (the SMART patient picker lists patients with it). */
  search: SearchModule['service'];
  /** The repository scope a caller acts in. */
  scopeOf(auth: RequestAuth): RepositoryScope;
  repoFor(auth: RequestAuth): Repository;
  close(): void;
}

export interface AuthModuleOptions {
  config: Config;
  pool: Pool;
  logger: Logger;
  repositoryDeps: RepositoryDeps;
  systemRepo(projectId?: string): Repository;
  superAdminProjectId: string;
  search: SearchModule;
  mailer?: Mailer;
  /** Projects every member may read but not write (the R4 terminology and definitions). */
  sharedProjects?: () => string[];
  /** Where first-start sign-in instructions go (stdout). */
  print?: (text: string) => void;
}

/** FHIR routes anyone may call: the CapabilityStatement and SMART discovery. */
const PUBLIC_FHIR = /\/fhir\/R4\/(metadata|\.well-known\/[^/?]+)(\?|$)/;

export async function createAuthModule(options: AuthModuleOptions): Promise<AuthModule> {
  const { config, pool, logger } = options;
  const keys = new KeyStore({
    pool,
    systemRepo: () => options.systemRepo(options.superAdminProjectId),
    logger,
    algorithm: config.signingAlgorithm,
    rotationDays: config.keyRotationDays,
    retireAfterMs: (config.refreshTokenLifetimeSeconds + config.accessTokenLifetimeSeconds) * 1000,
    issuer: config.baseUrl,
  });
  await keys.init();
  const mailer =
    options.mailer ??
    createMailer(
      {
        host: config.smtpHost,
        port: config.smtpPort,
        secure: config.smtpSecure,
        user: config.smtpUser,
        password: config.smtpPassword,
        from: config.emailFrom,
        tlsVerify: config.smtpTlsVerify,
      },
      logger,
    );
  const deps: AuthDeps = {
    config,
    pool,
    logger,
    keys,
    mailer,
    outbound: new OutboundPolicy(config.outboundAllowList),
    systemRepo: (projectId) => options.systemRepo(projectId ?? options.superAdminProjectId),
    superAdminProjectId: options.superAdminProjectId,
  };
  const bootstrap = await bootstrapSuperAdmin(deps, options.print ?? printSignIn(config));
  const shared = options.sharedProjects ?? (() => []);
  const registry = options.search.registry;
  const authenticator = new Authenticator(deps, async (state) => {
    await registry.ensure(pool, state.project.id as string);
    return searchCriteriaCompiler(registry, state.project.id as string, readProjectsOf(state, shared()));
  });

  const scopeOf = (auth: RequestAuth): RepositoryScope => ({
    projectId: auth.project.id as string,
    readProjects: readProjectsOf(auth, shared()),
    author: auth.profile,
    access: auth.guard,
  });
  const repoFor = (auth: RequestAuth): Repository => new Repository(options.repositoryDeps, scopeOf(auth));
  // Operations get the context, not the request: the caller is found again by its repository.
  const callers = new WeakMap<Repository, RequestAuth>();
  const callerRepo = (auth: RequestAuth): Repository => {
    const repo = repoFor(auth);
    callers.set(repo, auth);
    return repo;
  };
  const fhirBase = `${config.baseUrl}fhir/R4/`;
  const anonymous: RepositoryScope = { projectId: options.superAdminProjectId, readProjects: [] };

  const contextFor: FhirContextFactory = async (request: FastifyRequest) => {
    if (request.method === 'GET' && PUBLIC_FHIR.test(request.url)) {
      // Public, but a caller who sends a valid token is served in its own scope: its project's
      // SearchParameters are listed in /metadata. A bad token is not an error here.
      const signedIn = request.headers.authorization
        ? await authenticator.require(request).catch(() => undefined)
        : undefined;
      const repo = signedIn ? callerRepo(signedIn) : new Repository(options.repositoryDeps, anonymous);
      return { repo, fhirBase, requestId: request.id };
    }
    const auth = await authenticator.require(request);
    return { repo: callerRepo(auth), fhirBase, requestId: request.id };
  };

  return {
    deps,
    keys,
    authenticator,
    contextFor,
    callerOf: (context) => callers.get(context.repo),
    bootstrap,
    search: options.search.service,
    scopeOf,
    repoFor,
    close: () => keys.close(),
  };
}

/** First-start instructions go to stdout; with logging silenced only when they hold a generated password. */
function printSignIn(config: Config): (text: string) => void {
  return (text) => {
    if (config.logLevel !== 'silent' || !config.adminPassword) {
      process.stdout.write(text + '\n');
    }
  };
}

/**
 * Super admins read every project; others their own, the projects it links to and the shared
 * projects (terminology). Only the own project is writable (the role layer's write condition).
 */
function readProjectsOf(
  state: { superAdmin: boolean; project: { id?: string }; linkedProjects: string[] },
  shared: string[],
): string[] | undefined {
  return state.superAdmin ? undefined : [...new Set([state.project.id as string, ...state.linkedProjects, ...shared])];
}
