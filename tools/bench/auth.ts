import { createHash, randomBytes } from 'node:crypto';

/**
 * Signs in through the platform's /auth flow (login → code → token with PKCE) and returns the
 * Authorization header, or none when the server does not require sign-in.
 */
export async function signIn(baseUrl: string, email: string, password: string): Promise<Record<string, string>> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const login = await fetch(`${baseUrl}auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, codeChallenge: challenge, codeChallengeMethod: 'S256', scope: 'openid' }),
  });
  if (login.status === 404) {
    return {};
  }
  let body = (await login.json()) as { login?: string; code?: string; memberships?: { id: string }[] };
  if (!login.ok) {
    throw new Error(`sign-in failed: ${login.status} ${JSON.stringify(body)}`);
  }
  if (!body.code && body.memberships?.length) {
    const profile = await fetch(`${baseUrl}auth/profile`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: body.login, profile: body.memberships[0].id }),
    });
    body = (await profile.json()) as typeof body;
  }
  if (!body.code) {
    throw new Error(`sign-in gave no code: ${JSON.stringify(body)}`);
  }
  const token = await fetch(`${baseUrl}oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: body.code, code_verifier: verifier }),
  });
  const tokens = (await token.json()) as { access_token?: string };
  if (!tokens.access_token) {
    throw new Error(`token exchange failed: ${JSON.stringify(tokens)}`);
  }
  return { authorization: `Bearer ${tokens.access_token}` };
}
