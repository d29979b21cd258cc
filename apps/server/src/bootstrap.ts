import { generateId } from '@hearth/core';
import type { Config } from './config/schema.js';
import type { Logger } from './platform/logger.js';
import type { Pool } from './platform/postgres.js';
import { Repository } from './storage/repository.js';
import type { RepositoryDeps } from './storage/types.js';
import { getSetting, setSettingOnce } from './storage/settings.js';

const SUPER_ADMIN_PROJECT_KEY = 'superAdminProjectId';

/**
 * Creates the super admin project on first start (once, even when several processes start
 * together) and returns its id.
 */
export async function bootstrapSuperAdminProject(
  pool: Pool,
  deps: RepositoryDeps,
  _config: Config,
  logger: Logger,
): Promise<string> {
  const existing = await getSetting(pool, SUPER_ADMIN_PROJECT_KEY);
  if (existing) {
    return existing;
  }
  const id = await setSettingOnce(pool, SUPER_ADMIN_PROJECT_KEY, generateId());
  const repo = new Repository(deps, { projectId: id, readProjects: [id], system: true });
  try {
    await repo.updateResource({ resourceType: 'Project', id, name: 'Super Admin', superAdmin: true, strictMode: true });
    logger.info({ projectId: id }, 'created the super admin project');
  } catch (err) {
    // Another process created it first.
    const row = await pool.query('SELECT 1 FROM resource WHERE resource_type = $1 AND id = $2', ['Project', id]);
    if (row.rowCount === 0) {
      throw err;
    }
  }
  return id;
}
