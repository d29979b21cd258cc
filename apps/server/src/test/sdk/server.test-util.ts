/** What the SDK tests need from a test server: the super admin's sign-in. */
import type { Config } from '../../config/schema.js';

export const ADMIN_EMAIL = 'sdk-admin@example.com';
export const ADMIN_PASSWORD = 'sdk-test-password-4821';

/** Config for a test app whose first start creates the super admin with a known password. */
export function authConfig(): Partial<Config> {
  return { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD };
}
