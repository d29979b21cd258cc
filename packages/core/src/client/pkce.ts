/**
 * PKCE (RFC 7636) and the little JWT reading the client needs, over Web Crypto so that the same
 * code runs in browsers and in Node 20.
 */

import { sha256 } from './sha256.js';

/** base64url without padding (RFC 4648 §5), as PKCE and JWTs use it. */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) {
    binary += String.fromCharCode(b);
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Decodes base64url (with or without padding) to bytes. */
export function base64UrlDecode(text: string): Uint8Array {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

/** A random string of URL-safe characters from `byteLength` random bytes. */
export function randomString(byteLength = 32): string {
  const bytes = new Uint8Array(byteLength);
  globalThis.crypto.getRandomValues(bytes);
  return base64UrlEncode(bytes);
}

/** A code verifier: 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636 §4.1); this one has 86. */
export function generateCodeVerifier(): string {
  return randomString(64);
}

/** The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2). */
export async function computeCodeChallenge(verifier: string): Promise<string> {
  const bytes = new TextEncoder().encode(verifier);
  // Web Crypto's digest is missing in a browser page that is not a secure context (plain HTTP).
  const subtle = globalThis.crypto?.subtle as typeof globalThis.crypto.subtle | undefined;
  const digest = subtle ? new Uint8Array(await subtle.digest('SHA-256', bytes)) : sha256(bytes);
  return base64UrlEncode(digest);
}

/** The claims of a JWT, read without checking its signature (the server checks it; the client only reads `exp`). */
export function parseJwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) {
    return undefined;
  }
  try {
    const json = new TextDecoder().decode(base64UrlDecode(parts[1]));
    const payload = JSON.parse(json) as unknown;
    return typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** When a JWT expires (epoch ms), from its `exp` claim. */
export function jwtExpiresAt(token: string): number | undefined {
  const exp = parseJwtPayload(token)?.exp;
  return typeof exp === 'number' ? exp * 1000 : undefined;
}
