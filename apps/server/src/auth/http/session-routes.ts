import type { FastifyInstance } from 'fastify';
import { jwtVerify } from 'jose';
import { allOk, badRequest, fail, forbiddenWith, isValidId, notFoundWith } from '@hearth/core';
import type { AuthModule } from '../module.js';
import { auditLogin } from '../audit.js';
import { authenticateClient, fetchKeySet } from '../clients.js';
import { tokenExchangeGrant } from '../external-idp.js';
import { checkLoginParams, loadClient, startLogin } from '../login-flow.js';
import { createUser, normalizeEmail } from '../projects.js';
import { findUserByEmail, readByReference } from '../store.js';
import type { Login, Project } from '../types.js';
import { loginParams, objectBody, optionalString, requestInfo, requiredString, sendNoStore } from './common.js';

const GOOGLE_ISSUERS = ['accounts.google.com', 'https://accounts.google.com'];

/** Sign in with Google, external token exchange (JSON form) and revoking one's own sessions. */
export async function sessionRoutes(app: FastifyInstance, auth: AuthModule): Promise<void> {
  const deps = auth.deps;

  /** The Google client ids this server accepts: its own, and those of project sites. */
  async function googleClientIds(): Promise<string[]> {
    const ids = deps.config.googleClientId ? [deps.config.googleClientId] : [];
    const rows = await deps.pool.query<{ content: string }>(
      `SELECT content FROM "Project" WHERE NOT deleted AND content LIKE '%googleClientId%'`,
    );
    for (const row of rows.rows) {
      for (const site of (JSON.parse(row.content) as Project).site ?? []) {
        if (site.googleClientId) {
          ids.push(site.googleClientId);
        }
      }
    }
    return ids;
  }

  // POST /auth/google: a Google ID token (googleCredential) for the client id googleClientId.
  app.post('/auth/google', async (request, reply) => {
    const body = objectBody(request);
    const googleClientId = requiredString(body, 'googleClientId');
    const credential = requiredString(body, 'googleCredential');
    if (!(await googleClientIds()).includes(googleClientId)) {
      fail(badRequest('Sign in with Google is not set up for this client id', 'googleClientId'));
    }
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(credential, await fetchKeySet(deps, deps.config.googleJwksUrl), {
        audience: googleClientId,
        issuer: GOOGLE_ISSUERS,
      }));
    } catch (err) {
      fail(badRequest(`Invalid Google credential: ${(err as Error).message}`, 'googleCredential'));
    }
    if (typeof claims.email !== 'string' || claims.email_verified === false) {
      fail(badRequest('The Google account has no verified email', 'googleCredential'));
    }
    const params = loginParams(body);
    const client = await loadClient(deps, params.clientId);
    checkLoginParams(params, client);
    const email = normalizeEmail(claims.email);
    const info = requestInfo(request);
    let user = await findUserByEmail(deps.pool, email, params.projectId);
    if (!user && body.createUser === true && deps.config.registrationEnabled) {
      user = await createUser(deps, {
        firstName: typeof claims.given_name === 'string' ? claims.given_name : email.split('@')[0],
        lastName: typeof claims.family_name === 'string' ? claims.family_name : '',
        email,
      });
    }
    if (!user) {
      await auditLogin(deps, { outcome: 'failure', email, method: 'google', reason: 'user not found', ...info });
      fail(badRequest('User not found'));
    }
    await auditLogin(deps, { outcome: 'success', email, userId: user.id, method: 'google', ...info });
    return sendNoStore(reply, 200, await startLogin(deps, { user, authMethod: 'google', params, client, info }));
  });

  // POST /auth/exchange {clientId, externalAccessToken}: token exchange with a JSON body.
  app.post('/auth/exchange', async (request, reply) => {
    const body = objectBody(request);
    const form = {
      client_id: requiredString(body, 'clientId'),
      subject_token: requiredString(body, 'externalAccessToken'),
      scope: optionalString(body, 'scope'),
    };
    const client = await authenticateClient(deps, form, undefined, `${deps.config.baseUrl}oauth2/token`);
    return sendNoStore(reply, 200, await tokenExchangeGrant(deps, form, client, request.ip));
  });

  // POST /auth/revoke {loginId}: ends one of the caller's own sessions (default: this one).
  app.post('/auth/revoke', async (request, reply) => {
    const caller = await auth.authenticator.require(request);
    const loginId = optionalString(objectBody(request), 'loginId') ?? caller.login.id;
    if (!loginId || !isValidId(loginId)) {
      fail(badRequest('Invalid loginId', 'loginId'));
    }
    const login = await readByReference<Login>(deps.pool, `Login/${loginId}`);
    if (!login) {
      fail(notFoundWith('Login not found'));
    }
    if (login.user.reference !== `${caller.user.resourceType}/${caller.user.id}`) {
      fail(forbiddenWith('Only your own sessions can be revoked'));
    }
    if (!login.revoked) {
      await deps.systemRepo().updateResource({ ...login, revoked: true });
    }
    auth.authenticator.invalidate();
    return reply.send(allOk);
  });
}
