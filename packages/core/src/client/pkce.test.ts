import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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
