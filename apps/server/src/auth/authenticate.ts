import type { FastifyRequest } from 'fastify';
import { fail, isValidId, unauthorizedWith } from '@hearth/core';
import { throwIfConnectionError } from '../platform/postgres.js';
import type { WriteEvent } from '../storage/types.js';
import type { AuthDeps } from './deps.js';
import { clientSecretMatches, parseBasicAuth } from './clients.js';
import { compileAccess, type CompiledAccess } from './access/compile.js';
import type { CriteriaCompiler } from './access/criteria.js';
import { assertIpAllowed } from './access/ip-rules.js';
import { loadLoginState, resolveMembership, toAuthState, type AuthState } from './session.js';
import { findMembershipsOfUser, readByReference } from './store.js';
import { ACCESS_TOKEN_TYP, launchPatient, type AccessClaims } from './tokens.js';
import type { ClientApplication, Login } from './types.js';

/** The caller of one request: who, in which project, and what the access rules let them do. */
export interface RequestAuth extends AuthState, CompiledAccess {
  /** The bearer token, when the request carried one. */
  accessToken?: string;
  /** The patient in SMART launch context, if any. */
  patient?: string;
}

/** Platform types whose changes can change what a session may do. */
const SESSION_TYPES = new Set([
  'Login',
  'ProjectMembership',
  'Project',
  'AccessPolicy',
  'User',
  'ClientApplication',
  'Bot',
  'SmartAppLaunch',
]);
const MAX_CACHED = 10_000;

/**
 * Resolves the caller of a request from its Authorization header: a Bearer access token issued
 * here, or HTTP Basic client credentials. Sessions are cached per process for `authCacheMs`;
 * any write to a platform resource in this process clears the cache at once.
 */
export class Authenticator {
  private readonly cache = new Map<string, { auth: RequestAuth; expires: number }>();
  private readonly perRequest = new WeakMap<FastifyRequest, Promise<RequestAuth | undefined>>();
  /**
   * Claims of access tokens whose signature was verified here, until they expire: an ES256 check
   * costs more than the rest of a cached read (about a fifth of its CPU). Cleared with the sessions.
   */
  private readonly verified = new Map<string, AccessClaims>();

  constructor(
    private readonly deps: AuthDeps,
    /** The criteria compiler for a session's project (the search module's, registry loaded). */
    private readonly criteriaFor: (state: AuthState) => Promise<CriteriaCompiler>,
  ) {}

  /** A write listener (services.ts): platform writes invalidate cached sessions. */
  readonly onWrite = (events: WriteEvent[]): void => {
    if (events.some((e) => SESSION_TYPES.has(e.version.resourceType) || e.version.resourceType === 'JsonWebKey')) {
      this.cache.clear();
      this.verified.clear();
    }
  };

  invalidate(): void {
    this.cache.clear();
    this.verified.clear();
  }

  /** Verifies the token's signature and claims, or reuses an earlier verification while the token is unexpired. */
  private async verifiedClaims(token: string): Promise<AccessClaims> {
    const known = this.verified.get(token);
    if (known && typeof known.exp === 'number' && known.exp * 1000 > Date.now()) {
      return known;
    }
    const claims = (await this.deps.keys.verify(token, { typ: ACCESS_TOKEN_TYP })) as AccessClaims;
    if (typeof claims.exp === 'number') {
      if (this.verified.size >= MAX_CACHED) {
        this.verified.clear();
      }
      this.verified.set(token, claims);
    }
    return claims;
  }

  /** The caller, or undefined when the request carries no credentials; bad credentials are a 401. */
  authenticate(request: FastifyRequest): Promise<RequestAuth | undefined> {
    let pending = this.perRequest.get(request);
    if (!pending) {
      pending = this.resolve(request);
      this.perRequest.set(request, pending);
    }
    return pending;
  }

  /** The caller; a request without credentials is a 401. */
  async require(request: FastifyRequest): Promise<RequestAuth> {
    const auth = await this.authenticate(request);
    if (!auth) {
      fail(unauthorizedWith('Authentication required: send Authorization: Bearer <access token>'));
    }
    return auth;
  }

  private async resolve(request: FastifyRequest): Promise<RequestAuth | undefined> {
    const header = request.headers.authorization;
    if (!header) {
      return undefined;
    }
    let auth: RequestAuth;
    if (/^bearer\s/i.test(header)) {
      auth = await this.fromAccessToken(header.replace(/^bearer\s+/i, '').trim());
    } else if (/^basic\s/i.test(header)) {
      auth = await this.fromClientCredentials(header);
    } else {
      fail(unauthorizedWith('Unsupported Authorization scheme: use Bearer'));
    }
    assertIpAllowed(auth.ipRules, request.ip);
    return auth;
  }

  /** Verifies an access token and loads (or reuses) the session it stands for. */
  async fromAccessToken(token: string): Promise<RequestAuth> {
    let claims: AccessClaims;
    try {
      claims = await this.verifiedClaims(token);
    } catch (err) {
      // Reloading the keys (a kid rotated by another process) may need the database.
      throwIfConnectionError(err);
      const code = (err as { code?: string }).code;
      fail(unauthorizedWith(code === 'ERR_JWT_EXPIRED' ? 'Token expired' : 'Invalid token'));
    }
    if (typeof claims.login_id !== 'string' || !isValidId(claims.login_id)) {
      fail(unauthorizedWith('Invalid token'));
    }
    const key = `${claims.login_id}|${claims.scope ?? ''}`;
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) {
      return { ...cached.auth, accessToken: token };
    }
    const login = await readByReference<Login>(this.deps.pool, `Login/${claims.login_id}`);
    if (!login) {
      fail(unauthorizedWith('Login not found'));
    }
    const state = await loadLoginState(this.deps.pool, { ...login, scope: claims.scope ?? login.scope });
    if (claims.sub !== state.user.id) {
      fail(unauthorizedWith('Invalid token'));
    }
    const patient = await launchPatient(this.deps, login, state);
    const criteria = await this.criteriaFor(state);
    const auth = this.remember(key, {
      ...state,
      ...compileAccess(state, patient, criteria, this.deps.logger),
      patient,
    });
    return { ...auth, accessToken: token };
  }

  /** HTTP Basic with a client id and secret acts as the client's own membership (no Login stored). */
  private async fromClientCredentials(header: string): Promise<RequestAuth> {
    const basic = parseBasicAuth(header);
    const client =
      basic && isValidId(basic.id)
        ? await readByReference<ClientApplication>(this.deps.pool, `ClientApplication/${basic.id}`)
        : undefined;
    if (
      !basic ||
      !client ||
      !clientSecretMatches(client, basic.secret) ||
      (client.status && client.status !== 'active')
    ) {
      fail(unauthorizedWith('Invalid client credentials'));
    }
    const key = `basic|${client.id}|${client.meta?.versionId}`;
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) {
      return cached.auth;
    }
    const membership = (
      await findMembershipsOfUser(this.deps.pool, `ClientApplication/${client.id}`, client.meta?.project)
    ).find((m) => m.active !== false);
    if (!membership) {
      fail(unauthorizedWith('Client has no active project membership'));
    }
    const ctx = await resolveMembership(this.deps.pool, `ProjectMembership/${membership.id}`);
    const login: Login = {
      resourceType: 'Login',
      user: { reference: `ClientApplication/${client.id}` },
      client: { reference: `ClientApplication/${client.id}` },
      membership: { reference: `ProjectMembership/${membership.id}` },
      authMethod: 'client',
      authTime: new Date().toISOString(),
      scope: 'openid',
      granted: true,
    };
    const state = toAuthState(login, ctx, client);
    const criteria = await this.criteriaFor(state);
    return this.remember(key, { ...state, ...compileAccess(state, undefined, criteria, this.deps.logger) });
  }

  /**
   * A membership acting on its own, outside any request: a bot run (the bot's membership), a
   * subscription delivery (read as its author). Its access policy applies as to its own requests;
   * no Login is stored. Cached like sessions.
   */
  async forMembership(membershipReference: string): Promise<RequestAuth> {
    const key = `member|${membershipReference}`;
    const cached = this.cache.get(key);
    if (cached && cached.expires > Date.now()) {
      return cached.auth;
    }
    const ctx = await resolveMembership(this.deps.pool, membershipReference);
    const login: Login = {
      resourceType: 'Login',
      user: ctx.membership.user,
      membership: { reference: membershipReference },
      authMethod: 'execute',
      authTime: new Date().toISOString(),
      scope: 'openid',
      granted: true,
    };
    const state = toAuthState(login, ctx);
    const criteria = await this.criteriaFor(state);
    return this.remember(key, { ...state, ...compileAccess(state, undefined, criteria, this.deps.logger) });
  }

  private remember(key: string, auth: RequestAuth): RequestAuth {
    if (this.deps.config.authCacheMs > 0) {
      if (this.cache.size >= MAX_CACHED) {
        this.cache.clear();
      }
      this.cache.set(key, { auth, expires: Date.now() + this.deps.config.authCacheMs });
    }
    return auth;
  }
}
