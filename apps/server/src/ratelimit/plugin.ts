import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequestsWith } from '@hearth/core';
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

function settingLimit(setting: Settings): number | undefined {
  const s = setting?.find((x) => x.name === 'rateLimitRequestsPerMinute');
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
    if (config.rateLimitAuthRequestsPerMinute > 0 && SIGN_IN.test(path)) {
      decisions.push(await limiter.hit(`auth-ip:${ip}`, config.rateLimitAuthRequestsPerMinute, true));
    }
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
    if (decisions.length === 0) {
      return;
    }
    const refused = decisions.find((d) => !d.allowed);
    const tightest = refused ?? decisions.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    headers(reply, tightest);
    if (refused) {
      reply.header('retry-after', String(refused.resetSeconds));
      return sendOutcome(
        reply,
        429,
        tooManyRequestsWith(`Too many requests: try again in ${refused.resetSeconds} seconds`),
      );
    }
  });
}
