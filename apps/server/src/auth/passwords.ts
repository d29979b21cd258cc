import { hash, verify } from '@node-rs/argon2';
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { badRequest, fail } from '@hearth/core';

/**
 * Argon2id (RFC 9106) with the library's defaults (19 MiB, 2 passes): slow and salted.
 * Hashes are PHC strings, so parameters can be raised later without breaking old hashes.
 */
export async function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(password: string, passwordHash: string | undefined): Promise<boolean> {
  if (!passwordHash) {
    // Spend the same time as a real check so a missing user cannot be told apart by timing.
    await hash(password).catch(() => undefined);
    return false;
  }
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** The rules a new password must follow; too short or too common is a 400 naming the field. */
export function checkNewPassword(password: unknown, field = 'password'): string {
  if (typeof password !== 'string' || password.length < 8) {
    fail(badRequest('Password must be at least 8 characters', field));
  }
  if (password.length > 256) {
    fail(badRequest('Password must be at most 256 characters', field));
  }
  if (
    /^(.)\1*$/.test(password) ||
    ['password', 'password1', '12345678', '123456789', 'qwertyui'].includes(password.toLowerCase())
  ) {
    fail(badRequest('Password is too easy to guess', field));
  }
  return password;
}

/** A URL-safe random secret (authorization codes, refresh secrets, reset links). */
export function generateSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A readable random password for the first super admin. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== 'string' || typeof b !== 'string') {
    return false;
  }
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** base64url(SHA-256(verifier)), the S256 code challenge of RFC 7636 §4.2. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
