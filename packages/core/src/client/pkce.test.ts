import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateId, isUUID } from '../ids.js';
import { sha256 } from './sha256.js';
import {
  base64UrlDecode,
  base64UrlEncode,
  computeCodeChallenge,
  generateCodeVerifier,
  jwtExpiresAt,
  parseJwtPayload,
} from './pkce.js';

describe('PKCE (RFC 7636)', () => {
  it('makes verifiers of 43-128 unreserved characters, different each time', () => {
    const a = generateCodeVerifier();
    const b = generateCodeVerifier();
    expect(a).toMatch(/^[A-Za-z0-9\-._~]{43,128}$/);
    expect(a).not.toBe(b);
  });

  it('computes the S256 challenge as BASE64URL(SHA256(verifier)), as node:crypto does', async () => {
    for (let i = 0; i < 20; i++) {
      const verifier = generateCodeVerifier();
      const expected = createHash('sha256').update(verifier, 'ascii').digest('base64url');
      expect(await computeCodeChallenge(verifier)).toBe(expected);
    }
  });

  it('computes the challenge of a fixed verifier', async () => {
    const verifier = 'abcdefghijklmnopqrstuvwxyz0123456789-._~ABCDEFG';
    expect(await computeCodeChallenge(verifier)).toBe(createHash('sha256').update(verifier).digest('base64url'));
    expect(await computeCodeChallenge(verifier)).toHaveLength(43);
  });
});

describe('without Web Crypto digests and randomUUID (a browser page on plain HTTP)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('computes SHA-256 itself, as node:crypto does, for every padding length', () => {
    for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
      const data = new Uint8Array(length).map((_, i) => (i * 31 + length) % 256);
      expect(Buffer.from(sha256(data)).toString('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('still makes the S256 challenge and v4 UUIDs', async () => {
    const { getRandomValues } = globalThis.crypto;
    vi.stubGlobal('crypto', { getRandomValues: getRandomValues.bind(globalThis.crypto) });
    expect(globalThis.crypto.subtle).toBeUndefined();
    const verifier = generateCodeVerifier();
    expect(await computeCodeChallenge(verifier)).toBe(createHash('sha256').update(verifier).digest('base64url'));
    const ids = new Set(Array.from({ length: 50 }, () => generateId()));
    expect(ids.size).toBe(50);
    for (const id of ids) {
      expect(isUUID(id)).toBe(true);
      expect(id[14]).toBe('4');
      expect('89ab').toContain(id[19]);
    }
  });
});

describe('base64url', () => {
  it('round-trips every byte value without padding', () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const text = base64UrlEncode(bytes);
    expect(text).not.toMatch(/[+/=]/);
    expect(text).toBe(Buffer.from(bytes).toString('base64url'));
    expect([...base64UrlDecode(text)]).toEqual([...bytes]);
  });
});

describe('JWT reading', () => {
  const jwt = (payload: object) =>
    `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;

  it('reads the payload and the expiry', () => {
    expect(parseJwtPayload(jwt({ sub: 'é', exp: 100 }))).toEqual({ sub: 'é', exp: 100 });
    expect(jwtExpiresAt(jwt({ exp: 100 }))).toBe(100_000);
  });

  it('answers undefined for anything that is not a JWT', () => {
    expect(parseJwtPayload('opaque-token')).toBeUndefined();
    expect(parseJwtPayload('a.b.c')).toBeUndefined();
    expect(jwtExpiresAt(jwt({ sub: 'x' }))).toBeUndefined();
  });
});
