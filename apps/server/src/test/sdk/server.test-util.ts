/** What the SDK tests need from a test server: the super admin's sign-in, when the server has sign-in. */
import type { Config } from '../../config/schema.js';

export const ADMIN_EMAIL = 'sdk-admin@example.com';
export const ADMIN_PASSWORD = 'sdk-test-password-4821';

/** Config for a test app whose first start creates the super admin with a known password. */
export function authConfig(): Partial<Config> {
  // Built as a plain record: these keys exist only once the server has sign-in.
  const config: Record<string, unknown> = { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD };
  return config as Partial<Config>;
}

/** True when the server answers POST /auth/login (rather than "no route"). */
export async function hasSignIn(baseUrl: string): Promise<boolean> {
  const response = await fetch(`${baseUrl}auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const text = await response.text();
  return !(response.status === 404 && text.includes('No route'));
}
