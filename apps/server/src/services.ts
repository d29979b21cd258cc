import type { Config } from './config/schema.js';
import type { Logger } from './platform/logger.js';
import type { Pool } from './platform/postgres.js';
import { Repository } from './storage/repository.js';
import type { RepositoryDeps, RepositoryScope, ResourceValidator, SearchIndexer } from './storage/types.js';
import { WriteEvents, type WriteSubscriptions } from './storage/write-events.js';
import { OperationRegistry } from './operations/registry.js';
import type { ElementShaper } from './resources/elements.js';
import type { FhirContextFactory } from './auth/context-factory.js';
import type { SearchModule } from './search/service.js';
import { createSearchModule } from './search/module.js';
import { createValidator, createShaper } from './resources/definitions.js';
import { shapeResource } from './resources/elements.js';
import { bootstrapSuperAdminProject } from './bootstrap.js';
import { validateOperation } from './resources/validate-operation.js';
import { createProfileService } from './resources/profiles.js';
import { withUnitChecks } from './resources/units.js';
import { AutoAnalyzer } from './storage/auto-analyze.js';
import type { BinaryStore } from './storage/binary-store.js';
import { FileBinaryStore } from './storage/file-binary-store.js';
import { PostgresBinaryStore } from './storage/postgres-binary-store.js';
import { BinaryUrlSigner } from './storage/binary-urls.js';
import { join } from 'node:path';
import { createTerminologyModule, type TerminologyModule } from './terminology/module.js';
import { expandForSearch, subsumedCodesSql } from './terminology/api.js';
import { createAutomation, type Automation } from './automation/module.js';
import { withSubscriptionChecks } from './subscriptions/validate.js';
import { BROADCAST_CHANNEL } from './subscriptions/broadcast.js';
import { applyOwnWrites, ChangeNotices, withChangeNotices } from './storage/change-notices.js';
import { createAuthModule, type AuthModule } from './auth/module.js';
import { projectInitOperation } from './auth/operations/project-init.js';
import { registerImagingOperations } from './imaging/operation.js';
import { everythingOperation } from './export/everything.js';
import { Materializer } from './analytics/materialize.js';
import { registerViewRun } from './analytics/run.js';
import { applyOperation } from './careplans/apply.js';
import { registerBillingOperations } from './billing/operations.js';
import { createMessagingModule } from './messaging/module.js';
import { appBaseUrl } from './auth/deps.js';
import { registerSchedulingOperations, SCHEDULING_UPDATE_RULES } from './scheduling/module.js';
import { evaluateMeasureOperation } from './measures/evaluate.js';
import { MeasureCache } from './measures/measure-cache.js';
import { registerBulkExport } from './export/bulk-export.js';
import { registerBulkImport } from './bulk-import/bulk-import.js';
import { createGraphqlModule, type GraphqlModule } from './graphql/module.js';
import { createAgentModule, type AgentModule } from './agent/module.js';
import { createFhircastModule, type FhircastModule } from './fhircast/module.js';
import { AuditModule } from './audit/module.js';
import { auditCallerOf } from './audit/caller.js';
import { withAuditSettingChecks } from './audit/validate.js';
import { defineServerReindex } from './jobs/reindex.js';
import type { Telemetry } from './observability/telemetry.js';
import { instrumentPool } from './observability/pool.js';

/** Everything the HTTP layer needs, built once at start-up. */
export interface Services {
  repositoryDeps: RepositoryDeps;
  /** A repository acting as the server itself, across all projects. */
  systemRepo(projectId?: string): Repository;
  search: SearchModule;
  operations: OperationRegistry;
  shaper: ElementShaper;
  validator: ResourceValidator;
  contextFor: FhirContextFactory;
  superAdminProjectId: string;
  /** Committed writes, for whoever must hear of them (auth's caches, subscriptions, reindex jobs). */
  writes: WriteSubscriptions;
  /** Binary content: in PostgreSQL or in files under the data directory (HEARTH_BINARY_STORAGE). */
  binaryStore: BinaryStore;
  /** Signed, expiring URLs of Binary content for Attachment.url in responses. */
  binaryUrls: BinaryUrlSigner;
  terminology: TerminologyModule;
  /** Background jobs, bots and subscriptions. */
  automation: Automation;
  /** Sign-in, tokens, sessions and access rules. */
  auth: AuthModule;
  /** FHIR GraphQL: $graphql and the GraphiQL page. */
  graphql: GraphqlModule;
  /** On-premises agents: the /ws/agent hub and Agent operations. */
  agents: AgentModule;
  /** The FHIRcast hub (/fhircast, /ws/fhircast/{endpoint}). */
  fhircast: FhircastModule;
  /** Refreshes the statistics of tables that grew (HEARTH_AUTO_ANALYZE); stopped when the app closes. */
  autoAnalyzer?: AutoAnalyzer;
  /** The access audit trail (docs/compliance.md); flushed when the app closes. */
  audit: AuditModule;
  /**
   * Rewrites every index row (search and terminology) of the versions given: the super admin's
   * reindex. Unlike the write path's indexer, stored AuditEvents are not mirrored into the trail again.
   */
  reindexer: SearchIndexer;
  /** Materialised ViewDefinitions: kept up to date as resources are written (analytics/materialize.ts). */
  materializer: Materializer;
}

export async function createServices(
  config: Config,
  pool: Pool,
  logger: Logger,
  telemetry: Telemetry = {},
): Promise<Services> {
  // SQL spans under the current span, the pool's size and waits (observability/pool.ts).
  instrumentPool(pool, 'main', telemetry);
  // First: a misspelt HEARTH_BINARY_STORAGE stops the start before anything else is set up.
  const binaryStore = createBinaryStore(config, pool);
  // Process-local caches of stored content hear of writes made by any process (storage/change-notices.ts).
  const notices = new ChangeNotices();
  const terminology = createTerminologyModule(pool, logger, { notices, maxAgeMs: config.cacheMaxAgeMs });
  // Writes of an active Subscription are also checked for what would keep it from firing, and
  // required bindings only the terminology can expand are checked too (prepared by terminology.start).
  // UCUM unit codes last: their warnings must not hide the checks before them.
  const validator = withUnitChecks(
    withAuditSettingChecks(withSubscriptionChecks(terminology.wrapValidator(createValidator()))),
  );
  const audit = new AuditModule({ config, pool, logger });
  const shaper = createShaper();
  const search = createSearchModule({
    pool,
    fhirBase: `${config.baseUrl}fhir/R4/`,
    shape: (resource, summary, elements) => shapeResource(resource, { pretty: false, summary, elements }, shaper),
    expandValueSet: terminology.expandValueSet,
    subsumedCodes: (system, code, direction, projectId) =>
      subsumedCodesSql(pool, { projects: [projectId] }, system, code, direction, 0),
    paramsMaxAgeMs: config.cacheMaxAgeMs,
  });
  notices.on(['SearchParameter'], (notice) => search.registry.forget(notice.projectId));
  const writes = new WriteEvents();
  // This process's caches drop at once on its own writes; the bus tells the other processes.
  writes.subscribe(applyOwnWrites(notices));
  // Stored profiles for $validate and enforced meta.profile (resources/profiles.ts), read again
  // when a project's definitions, terminology or settings change.
  const profiles = createProfileService({
    db: pool,
    expandValueSet: terminology.expandValueSet,
    maxAgeMs: config.cacheMaxAgeMs,
  });
  notices.on(['StructureDefinition', 'ValueSet', 'CodeSystem', 'Project'], () => profiles.forget());
  // The super admin's reindex (jobs/reindex.ts) rewrites every row, with the same notices to caches.
  const reindexer = config.redisUrl
    ? terminology.wrapIndexer(search.reindexer)
    : withChangeNotices(terminology.wrapIndexer(search.reindexer), notices, BROADCAST_CHANNEL);
  const repositoryDeps: RepositoryDeps = {
    pool,
    validator,
    // Writes that caches depend on tell every process at commit (PostgreSQL message bus; with
    // Redis the subscription module publishes them after the commit).
    // Each write's audit entry is written with the write (audit/capture.ts).
    indexer: audit.wrapIndexer(
      config.redisUrl
        ? terminology.wrapIndexer(search.indexer)
        : withChangeNotices(terminology.wrapIndexer(search.indexer), notices, BROADCAST_CHANNEL),
    ),
    matcher: search.matcher,
    events: writes,
    profiles,
    updateRules: SCHEDULING_UPDATE_RULES,
  };
  const systemRepo = (projectId?: string): Repository => {
    const scope: RepositoryScope = { projectId: projectId ?? superAdminProjectId, system: true };
    return new Repository(repositoryDeps, scope);
  };
  let superAdminProjectId = '';
  superAdminProjectId = await bootstrapSuperAdminProject(pool, repositoryDeps, config, logger);
  await terminology.start(repositoryDeps, superAdminProjectId);

  const operations = new OperationRegistry();
  operations.register(validateOperation(validator, profiles, terminology.checkCodings));
  terminology.registerOperations(operations);
  const graphql = createGraphqlModule({ config, search: search.service, params: search.registry, logger });
  graphql.registerOperations(operations);
  const auth = await createAuthModule({
    config,
    pool,
    logger,
    repositoryDeps,
    systemRepo,
    superAdminProjectId,
    search,
    sharedProjects: () => (terminology.projectId ? [terminology.projectId] : []),
  });
  writes.subscribe(auth.authenticator.onWrite);
  audit.callerOf = (context) => auditCallerOf(auth.callerOf(context));
  audit.registerOperations(operations);
  // A signing key added or revoked (active: false) in any process: every process reads its keys
  // again, one reading at a time, then forgets the tokens it verified with the old set.
  let keysRead = Promise.resolve();
  notices.on(['JsonWebKey'], () => {
    keysRead = keysRead
      .then(() => auth.keys.reload())
      .then(
        () => auth.authenticator.invalidate(),
        (err: unknown) => logger.warn({ err }, 'could not read the signing keys again'),
      );
  });
  operations.register(projectInitOperation(auth));
  registerImagingOperations(operations, { binaryStore });
  const contextFor: FhirContextFactory = auth.contextFor;
  const messaging = createMessagingModule();
  messaging.registerOperations(operations);
  const automation = await createAutomation({
    config,
    pool,
    logger,
    repositoryDeps,
    systemRepo,
    search,
    binaryStore,
    operations,
    writes,
    notices,
    // Bots act as their own membership, deliveries read as the subscription's author: access rules apply.
    memberScope: async (membership) => auth.scopeOf(await auth.authenticator.forMembership(membership)),
    // Without a relay, email deliveries fail visibly (the subscription shows why) rather than count as sent.
    mailer: auth.deps.mailer.delivers === false ? undefined : auth.deps.mailer,
    defineJobs: (jobs, subscriptions) => {
      audit.defineJobs(jobs);
      // New messages email their offline recipients through the relay (none configured: not sent).
      messaging.defineJobs(jobs, writes, {
        systemRepo,
        send: (message) => auth.deps.mailer.send(message),
        isConnected: subscriptions.isConnected,
        appBaseUrl: appBaseUrl(config),
        logger,
      });
    },
    telemetry,
  });
  const agents = createAgentModule({
    pool,
    logger,
    runner: automation.bots.runner,
    broadcaster: automation.subscriptions.broadcaster,
    repoForToken: async (token) => auth.repoFor(await auth.authenticator.fromAccessToken(token)),
    binaryStore,
  });
  agents.registerOperations(operations);
  notices.on(['Bot'], (notice) => agents.hub.botsChanged(notice.projectId));
  const fhircast = createFhircastModule({
    pool,
    logger,
    broadcaster: automation.subscriptions.broadcaster,
    baseUrl: config.baseUrl,
    ackTimeoutMs: config.fhircastAckTimeoutMs,
  });
  await audit.scheduleRetention(automation.jobs);
  audit.start();
  operations.register(everythingOperation(search.service));
  operations.register(applyOperation());
  registerBillingOperations(operations);
  registerSchedulingOperations(operations, { search: search.service });
  registerViewRun(operations, { search: search.service });
  registerBulkImport(operations, {
    asyncJobs: automation.asyncJobs,
    binaryStore,
    pool,
    outbound: automation.outbound,
    outboundTimeoutMs: config.outboundTimeoutMs,
  });
  const materializer = new Materializer({
    pool,
    search: search.service,
    repositoryDeps,
    writes,
    logger,
    isProjectAdmin: (input) => {
      const caller = auth.callerOf(input.context);
      return caller?.projectAdmin === true || caller?.superAdmin === true;
    },
  });
  materializer.register(operations);
  materializer.start();
  // Value sets as the caller sees the terminology: its readable projects plus the global content.
  // Prepared measure logic is kept between evaluations until a Measure, Library or terminology write.
  const measureCache = new MeasureCache({ maxAgeMs: config.cacheMaxAgeMs });
  notices.on(['Measure', 'Library', 'ValueSet', 'CodeSystem'], () => measureCache.forget());
  operations.register(
    evaluateMeasureOperation({
      search: search.service,
      expandValueSet: (url, repo) => expandForSearch(pool, { projects: repo.scope.readProjects }, url),
      patientCompartments: (resource) => search.patientCompartmentsOf(resource),
      elementTokenParam: (type, element, projectId) => search.elementTokenParam(type, element, projectId),
      cache: measureCache,
    }),
  );
  registerBulkExport(operations, {
    asyncJobs: automation.asyncJobs,
    search: search.service,
    binaryStore,
    repositoryDeps,
    trail: {
      exports: (input) => audit.callerOf(input.context)?.admin === true,
      entries: (projectId, since, fhirBase) => audit.entries(projectId, since, fhirBase),
    },
  });
  defineServerReindex(automation.asyncJobs, { pool, indexer: reindexer });
  const autoAnalyzer = startAutoAnalyzer(config, pool, logger);
  return {
    repositoryDeps,
    systemRepo,
    search,
    operations,
    shaper,
    validator,
    contextFor,
    superAdminProjectId,
    writes,
    terminology,
    binaryStore,
    binaryUrls: new BinaryUrlSigner(pool, config.baseUrl, `${config.baseUrl}fhir/R4/`),
    automation,
    auth,
    graphql,
    agents,
    fhircast,
    autoAnalyzer,
    audit,
    reindexer,
    materializer,
  };
}

/** The statistics refresher when configured (HEARTH_AUTO_ANALYZE, HEARTH_AUTO_ANALYZE_GROWTH_PERCENT). */
function startAutoAnalyzer(config: Config, pool: Pool, logger: Logger): AutoAnalyzer | undefined {
  if (!config.autoAnalyze) {
    return undefined;
  }
  if (config.autoAnalyzeGrowthPercent < 1) {
    throw new Error(
      `Config autoAnalyzeGrowthPercent (HEARTH_AUTO_ANALYZE_GROWTH_PERCENT) must be at least 1, got ${config.autoAnalyzeGrowthPercent} (to turn the refresh off, set HEARTH_AUTO_ANALYZE=false)`,
    );
  }
  const analyzer = new AutoAnalyzer({ pool, logger, growth: config.autoAnalyzeGrowthPercent / 100 });
  analyzer.start();
  return analyzer;
}

/** The Binary content store HEARTH_BINARY_STORAGE names. */
export function createBinaryStore(config: Config, pool: Pool): BinaryStore {
  switch (config.binaryStorage) {
    case 'postgres':
      return new PostgresBinaryStore(pool, config.maxBinaryBytes);
    case 'files':
      return new FileBinaryStore(join(config.dataDir, 'binary'), config.maxBinaryBytes);
    default:
      throw new Error(
        `Config binaryStorage (HEARTH_BINARY_STORAGE) must be postgres or files, got "${config.binaryStorage}"`,
      );
  }
}
