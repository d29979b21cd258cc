import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import type { RepositoryDeps, ResourceValidator, SearchIndexer } from '../storage/types.js';
import type { ChangeNotices } from '../storage/change-notices.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { OperationOutcomeIssue, Resource } from '@hearth/core';
import { expandForSearch } from './api.js';
import { checkCodings } from './codings.js';
import { withTerminologyBindings } from './binding-validator.js';
import { createBindingChecker, type BindingChecker } from './bindings.js';
import { TERMINOLOGY_RESOURCE_TYPES, withTerminologyIndexing } from './indexer.js';
import { loadR4Terminology, type LoadResult } from './loader.js';
import { expandOperation } from './operations/expand.js';
import { importOperation } from './operations/import.js';
import { lookupOperation } from './operations/lookup.js';
import { subsumesOperation } from './operations/subsumes.js';
import { translateOperation } from './operations/translate.js';
import { codeSystemValidateCodeOperation, valueSetValidateCodeOperation } from './operations/validate-code.js';

/** Terminology's faces towards the rest of the server, built once in services.ts. */
export interface TerminologyModule {
  /** Wraps the search indexer so CodeSystem/ValueSet/ConceptMap writes also fill the terminology tables. */
  wrapIndexer(inner: SearchIndexer): SearchIndexer;
  /**
   * Wraps the validator so that writes are also checked against the required bindings only the
   * terminology can expand (Composition.confidentiality's v3 value set…); ready once start() ran.
   */
  wrapValidator(inner: ResourceValidator): ResourceValidator;
  /**
   * Loads the R4 content into the terminology project on first start. Terminology written in that
   * project or the super admin project is server-wide.
   */
  start(deps: RepositoryDeps, superAdminProjectId: string): Promise<LoadResult>;
  /**
   * The project holding the server-wide terminology (set by start). Only CodeSystems, ValueSets and
   * ConceptMaps live there: the auth module should let every project read it.
   */
  readonly projectId: string;
  /** Adds $expand, $lookup, $validate-code, $subsumes, $translate and $import (streamed bodies too). */
  registerOperations(registry: OperationRegistry): void;
  /** Required-binding checks against the global value sets, for the validator. */
  bindings: BindingChecker;
  /**
   * The codings of a resource checked against the code systems a project sees (unknown codes of a
   * complete system, displays the system does not give): for $validate.
   */
  checkCodings(resource: Resource, projectId: string): Promise<OperationOutcomeIssue[]>;
  /** Value set expansion for search's `:in` / `:not-in` (its `expandValueSet` option). */
  expandValueSet(url: string, projectId: string): Promise<{ system?: string; code: string }[]>;
  /** Stops re-reading the binding checks' value sets (the server is closing). */
  stop(): void;
}

export interface TerminologyModuleOptions {
  /** Writes of global terminology in any process (storage/change-notices.ts); without it, this process's only. */
  notices?: ChangeNotices;
  /** How long the binding checks may go without reading their value sets again (HEARTH_CACHE_MAX_AGE_MS). */
  maxAgeMs?: number;
}

export function createTerminologyModule(
  pool: Pool,
  logger: Logger,
  options: TerminologyModuleOptions = {},
): TerminologyModule {
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const globalProjects = new Set<string>();
  let terminologyProjectId = '';
  const bindings = createBindingChecker(pool, maxAgeMs);
  const deps = { pool, logger };
  const validators: { prepare(): Promise<void> }[] = [];
  /** Expansions read fresh (not from a cache filled before a write committed), then the checks. */
  const prepareValidators = async (): Promise<void> => {
    await Promise.all(validators.map((v) => v.prepare())).catch((err: unknown) =>
      logger.error({ err }, 'could not prepare the terminology binding checks'),
    );
  };
  // One preparation at a time; a request while one runs starts another after it (the running one
  // may have read the value sets before the write that asked committed).
  let running: Promise<void> | undefined;
  let again = false;
  const prepareSoon = (): void => {
    if (!started || validators.length === 0) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await prepareValidators();
      } while (again);
      running = undefined;
    })();
  };
  // A write in this process is heard inside its transaction: prepared again once the writes of the
  // moment are committed (debounced). Every process hears it at its commit through the notices.
  let started = false;
  let pending: NodeJS.Timeout | undefined;
  const prepareAfterCommit = () => {
    if (!started || validators.length === 0) return;
    clearTimeout(pending);
    pending = setTimeout(prepareSoon, 500);
    pending.unref();
  };
  options.notices?.on([...TERMINOLOGY_RESOURCE_TYPES], (notice) => {
    if (globalProjects.has(notice.projectId)) prepareSoon();
  });
  // A missed notice (the bus connection was reconnecting) is healed within maxAgeMs.
  const safetyNet = setInterval(prepareSoon, maxAgeMs);
  safetyNet.unref();
  return {
    bindings,
    // Global terminology changed: the cached expansions go, and the binding checks are prepared again.
    wrapIndexer: (inner) => withTerminologyIndexing(inner, globalProjects, prepareAfterCommit),
    wrapValidator(inner) {
      const validator = withTerminologyBindings(inner, bindings);
      validators.push(validator);
      return validator;
    },
    get projectId() {
      return terminologyProjectId;
    },
    async start(repositoryDeps, superAdminProjectId) {
      globalProjects.add(superAdminProjectId);
      const result = await loadR4Terminology(pool, repositoryDeps, logger, (id) => {
        terminologyProjectId = id;
        globalProjects.add(id);
      });
      await prepareValidators();
      started = true;
      return result;
    },
    stop() {
      clearInterval(safetyNet);
      clearTimeout(pending);
      started = false;
    },
    checkCodings: (resource, projectId) => checkCodings(pool, resource, { projects: [projectId] }),
    expandValueSet: (url, projectId) => expandForSearch(pool, { projects: [projectId] }, url),
    registerOperations(registry) {
      registry.register(expandOperation(deps));
      registry.register(lookupOperation(deps));
      registry.register(valueSetValidateCodeOperation(deps));
      registry.register(codeSystemValidateCodeOperation(deps));
      registry.register(subsumesOperation(deps));
      registry.register(translateOperation(deps));
      registry.register(importOperation(deps));
    },
  };
}
