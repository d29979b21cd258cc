import type { Config } from '../config/schema.js';
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import type { Mailer } from '../platform/email.js';
import type { OutboundPolicy } from '../platform/outbound-http.js';
import type { Repository } from '../storage/repository.js';
import type { KeyStore } from './keys.js';

/** What the auth functions share: passed in once from services.ts, never looked up globally. */
export interface AuthDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
  keys: KeyStore;
  mailer: Mailer;
  /** Which hosts server-side calls (identity providers, client JWKS) may reach. */
  outbound: OutboundPolicy;
  /** A repository acting as the server itself, writing into `projectId` (default: super admin project). */
  systemRepo(projectId?: string): Repository;
  superAdminProjectId: string;
}

/** The public URL of the web app (links in emails, the sign-in page). */
export function appBaseUrl(config: Config): string {
  const url = config.appBaseUrl || config.baseUrl;
  return url.endsWith('/') ? url : url + '/';
}
