/** What the SDK tests need from a test server: the super admin's sign-in. */
import { HearthClient, MemoryStorage } from '@hearth/core';
import type { Config } from '../../config/schema.js';
import { createTestApp, type TestApp } from '../app.js';

export const ADMIN_EMAIL = 'sdk-admin@example.com';
export const ADMIN_PASSWORD = 'sdk-test-password-4821';

/** Config for a test app whose first start creates the super admin with a known password. */
export function authConfig(): Partial<Config> {
  return { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD };
}

/**
 * A listening test server whose super admin is signed in through a fresh SDK client: the start of
 * every SDK test that talks to a real server as its admin.
 */
export async function serverWithSignedInAdmin(): Promise<{ t: TestApp; hearth: HearthClient }> {
  const t = await createTestApp({ listen: true, config: authConfig() });
  const hearth = new HearthClient({ baseUrl: t.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
  await hearth.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  return { t, hearth };
}
