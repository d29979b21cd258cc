// A refresh that meets a database outage must not be told its token is invalid: invalid_grant makes
// OAuth clients drop the refresh token and sign the user out.
import { describe, expect, it } from 'vitest';
import type { AuthDeps } from './deps.js';
import { refreshTokenGrant } from './grants.js';
import { OAuthError } from './oauth-error.js';

function depsWhoseKeysFail(err: Error): AuthDeps {
  return { keys: { verify: () => Promise.reject(err) } } as unknown as AuthDeps;
}

describe('refreshTokenGrant', () => {
  it('passes a lost database connection on (a 503), not invalid_grant', async () => {
    const lost = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    await expect(refreshTokenGrant(depsWhoseKeysFail(lost), { refresh_token: 'a.b.c' }, undefined)).rejects.toBe(lost);
  });

  it('answers invalid_grant for a token that does not verify', async () => {
    const bad = Object.assign(new Error('signature verification failed'), {
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
    const err = await refreshTokenGrant(depsWhoseKeysFail(bad), { refresh_token: 'a.b.c' }, undefined).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OAuthError);
    expect((err as OAuthError).code).toBe('invalid_grant');
  });
});
