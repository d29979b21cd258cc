import type { FhirContext } from '../../operations/context.js';
import type { Logger } from '../../platform/logger.js';
import type { Pool } from '../../platform/postgres.js';
import type { TerminologyScope } from '../resolve.js';

/** What every terminology operation needs. */
export interface TerminologyDeps {
  pool: Pool;
  logger: Logger;
}

/** The caller's terminology scope: its readable projects plus the global content. */
export function scopeOf(context: FhirContext): TerminologyScope {
  return { projects: context.repo.scope.readProjects };
}

/** The project the caller writes to ($import targets only its own code systems). */
export function ownProjectOf(context: FhirContext): string {
  return context.repo.scope.projectId;
}
