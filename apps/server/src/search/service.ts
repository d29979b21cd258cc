import type { Bundle, Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../platform/logger.js';
import type { ConditionalMatcher, SearchIndexer, WriteListener } from '../storage/types.js';
import type { SearchParamRegistry } from './registry/project-params.js';
import type { SearchParamInfo } from './metadata.js';

export interface SearchInput {
  /** Undefined for a system-level search (then _type may narrow it). */
  resourceType?: string;
  /** Compartment search: Patient/123/Observation. */
  compartment?: { resourceType: string; id: string };
  /** The search parameters, from the query string or a form body. */
  params: URLSearchParams;
  /** Absolute FHIR base ending in '/', for fullUrl and links. */
  fhirBase: string;
  /** Prefer: handling=strict|lenient */
  strict: boolean;
  /**
   * Patient/$everything's start/end: only resources whose care date (their `date` search
   * parameter) overlaps [low, high), epoch ms; resources of types without one are all kept.
   */
  careDates?: { low: number; high: number };
}

export interface SearchService {
  /** Runs a search in the repository's scope; returns the searchset Bundle as JSON text. */
  search(repo: Repository, input: SearchInput): Promise<string>;
}

/** The search module's faces: write-time indexing, conditional matching, search itself, and its parameters. */
export interface SearchModule {
  indexer: SearchIndexer;
  matcher: ConditionalMatcher;
  service: SearchService;
  /** The search parameters in force per project (base R4 + platform + the project's own). */
  registry: SearchParamRegistry;
  /**
   * An indexer that rewrites every index row of the versions it is given (index() trusts a first
   * version to have none): for the super admin's reindex, whatever state the rows are in.
   */
  reindexer: SearchIndexer;
  /** Rewrites the index rows of `types` (default: all) in a project (default: every project). */
  reindex(types?: string[], projectId?: string): Promise<number>;
  /** The search parameters of a type, with a project's own when given (for GET /metadata). */
  searchParamsFor(resourceType: string, projectId?: string): Promise<SearchParamInfo[]>;
  /**
   * The Patient compartments a resource is in ('Patient/123'), as stored with it: for readers of a
   * search over several patients' compartments that hand each resource to its patients.
   */
  patientCompartmentsOf(resource: Resource): string[];
  /**
   * The token parameter of a type, in a project, whose values hold every code of one element
   * (`Observation`, `code` → `code`; `Encounter`, `type` → `type`), or undefined when none does.
   */
  elementTokenParam(resourceType: string, element: string, projectId: string): Promise<string | undefined>;
  /**
   * Reindexing after a project's SearchParameter write becomes a job of `jobs` (call before the
   * queue starts); returns the write listener that queues it after the commit. Without this,
   * the reindex runs inside the SearchParameter's write transaction.
   */
  useJobQueue(jobs: JobQueue, logger: Logger): WriteListener;
}

export type { Bundle };
