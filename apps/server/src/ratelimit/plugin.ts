import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isValidId, tooManyRequestsWith, type Resource } from '@hearth/core';
import { readByReference } from '../auth/store.js';
import type { Project } from '../auth/types.js';
import type { Config } from '../config/schema.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { Logger } from '../platform/logger.js';
import type { Pool } from '../platform/postgres.js';
import { sendOutcome } from '../http/fhir-reply.js';
import { RateLimiter, type LimitDecision } from './limiter.js';
import { PostgresCounterStore, RedisCounterStore } from './store.js';

/** Sign-in endpoints: a separate, tighter limit per client address (brute force, credential stuffing). */
const SIGN_IN =
  /^(?:\/api)?\/(?:auth\/(?:login|newuser|newproject|newpatient|resetpassword|setpassword|mfa\/verify|mfa\/login-enroll|profile|method|external)|oauth2\/(?:token|authorize))(?:[/?]|$)/;
const UNLIMITED = /^(?:\/api)?\/(?:healthcheck)(?:[/?]|$)/;

export interface RateLimitOptions {
  config: Config;
  pool: Pool;
  logger: Logger;
  authenticator: Authenticator;
}

type Settings = { name: string; valueInteger?: number; valueDecimal?: number }[] | undefined;

function settingLimit(setting: Settings, name = 'rateLimitRequestsPerMinute'): number | undefined {
  const s = setting?.find((x) => x.name === name);
  const n = s?.valueInteger ?? s?.valueDecimal;
  return typeof n === 'number' && n > 0 ? Math.floor(n) : undefined;
}

/**
 * A member's per-minute limit: the server's, or the project's `systemSetting` (super admins set
 * it, to raise or lower a project's allowance); the project's own `setting` may only lower that.
 */
export function userLimit(serverLimit: number, project: { setting?: Settings; systemSetting?: Settings }): number {
  const base = settingLimit(project.systemSetting) ?? serverLimit;
  return Math.min(base, settingLimit(project.setting) ?? Infinity);
}

function headers(reply: FastifyReply, d: LimitDecision): void {
  // draft-ietf-httpapi-ratelimit-headers: the tightest bucket of the request.
  reply.header('ratelimit-limit', String(d.limit));
  reply.header('ratelimit-remaining', String(d.remaining));
  reply.header('ratelimit-reset', String(d.resetSeconds));
  reply.header('ratelimit-policy', `${d.limit};w=60`);
}

/**
 * Per-IP, per-user and sign-in request limits, counted across processes (PostgreSQL, or Redis
 * when HEARTH_REDIS_URL is set). Over a limit: 429 with an OperationOutcome, RateLimit-* and
 * Retry-After. Installed on the root instance so that it covers every route.
 */
export function installRateLimits(app: FastifyInstance, options: RateLimitOptions): void {
  const { config } = options;
  if (
    !config.rateLimitRequestsPerMinute &&
    !config.rateLimitIpRequestsPerMinute &&
    !config.rateLimitAuthRequestsPerMinute
  ) {
    return;
  }
  const store = config.redisUrl ? new RedisCounterStore(config.redisUrl) : new PostgresCounterStore(options.pool);
  const limiter = new RateLimiter(store, {
    onError: (err) => options.logger.warn({ err }, 'rate-limit counters unavailable'),
  });
  const prune = setInterval(() => void store.prune().catch(() => undefined), 5 * 60_000);
  prune.unref();
  app.addHook('onClose', async () => {
    clearInterval(prune);
    await limiter.close();
  });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url;
    if (UNLIMITED.test(path)) {
      return;
    }
    const decisions: LimitDecision[] = [];
    const ip = request.ip;
    // The sign-in limit is counted in preHandler, once the body names the project.
    if (config.rateLimitIpRequestsPerMinute > 0) {
      decisions.push(await limiter.hit(`ip:${ip}`, config.rateLimitIpRequestsPerMinute));
    }
    if (config.rateLimitRequestsPerMinute > 0) {
      // The caller is resolved once per request (memoised): a bad token is the handler's 401.
      const caller = request.headers.authorization
        ? await options.authenticator.authenticate(request).catch(() => undefined)
        : undefined;
      if (caller) {
        const limit = userLimit(config.rateLimitRequestsPerMinute, caller.project);
        decisions.push(await limiter.hit(`user:${caller.user.resourceType}/${caller.user.id}`, limit));
      }
    }
    return decide(request, reply, decisions);
  });

  if (config.rateLimitAuthRequestsPerMinute > 0) {
    // Sign-in requests, per client address: the server's limit, or that of the project the
    // request names (projectId, or its client's project) when a super admin set one for it.
    app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!SIGN_IN.test(request.url)) {
        return;
      }
      const project = await signInProject(options.pool, request.body);
      const own = settingLimit(project?.systemSetting, 'rateLimitAuthRequestsPerMinute');
      const limit = Math.min(
        own ?? config.rateLimitAuthRequestsPerMinute,
        settingLimit(project?.setting, 'rateLimitAuthRequestsPerMinute') ?? Infinity,
      );
      const key = project && limit !== config.rateLimitAuthRequestsPerMinute ? `auth-ip:${project.id}:` : 'auth-ip:';
      return decide(request, reply, [await limiter.hit(`${key}${request.ip}`, limit, true)]);
    });
  }
}

/** The tightest bucket so far of each request, for the RateLimit-* headers. */
const tightestOf = new WeakMap<FastifyRequest, LimitDecision>();

/** Sets the headers of the tightest bucket of the request; over a limit, answers 429. */
function decide(request: FastifyRequest, reply: FastifyReply, decisions: LimitDecision[]): FastifyReply | undefined {
  const earlier = tightestOf.get(request);
  const all = earlier ? [earlier, ...decisions] : decisions;
  if (all.length === 0) {
    return undefined;
  }
  const refused = all.find((d) => !d.allowed);
  const tightest = refused ?? all.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  tightestOf.set(request, tightest);
  headers(reply, tightest);
  if (refused) {
    reply.header('retry-after', String(refused.resetSeconds));
    return sendOutcome(
      reply,
      429,
      tooManyRequestsWith(`Too many requests: try again in ${refused.resetSeconds} seconds`),
    );
  }
  return undefined;
}

/** The project a sign-in request names: its projectId, else the project of its client. */
async function signInProject(pool: Pool, body: unknown): Promise<Project | undefined> {
  if (!body || typeof body !== 'object') {
    return undefined;
  }
  const fields = body as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && isValidId(v) ? v : undefined);
  let projectId = text(fields.projectId);
  if (!projectId) {
    const clientId = text(fields.clientId) ?? text(fields.client_id);
    const client = clientId ? await readByReference<Resource>(pool, `ClientApplication/${clientId}`) : undefined;
    projectId = client?.meta?.project;
  }
  return projectId ? readByReference<Project>(pool, `Project/${projectId}`) : undefined;
}
