import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, fail } from '@hearth/core';
import type { RequestInfo } from '../login-flow.js';
import type { LoginParams } from '../login-flow.js';

export type Body = Record<string, unknown>;

/** The request body as a JSON object (or form fields); anything else is a 400. */
export function objectBody(request: FastifyRequest): Body {
  const body = request.body;
  if (body === undefined || body === null || body === '') {
    return {};
  }
  if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    fail(badRequest('Request body must be a JSON object'));
  }
  return body as Body;
}

export function optionalString(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') {
    return undefined;
  }
  if (typeof value !== 'string') {
    fail(badRequest(`${name} must be a string`, name));
  }
  return value;
}

export function requiredString(body: Body, name: string): string {
  const value = optionalString(body, name);
  if (value === undefined || !value.trim()) {
    fail(badRequest(`${name} is required`, name));
  }
  return value;
}

/** The spec's LoginRequest fields from a JSON body. */
export function loginParams(body: Body): LoginParams {
  return {
    projectId: optionalString(body, 'projectId'),
    clientId: optionalString(body, 'clientId'),
    scope: optionalString(body, 'scope'),
    nonce: optionalString(body, 'nonce'),
    launch: optionalString(body, 'launch'),
    codeChallenge: optionalString(body, 'codeChallenge'),
    codeChallengeMethod: optionalString(body, 'codeChallengeMethod'),
    resourceType: optionalString(body, 'resourceType'),
    redirectUri: optionalString(body, 'redirectUri'),
    remember: body.remember === true || body.remember === 'true',
  };
}

export function requestInfo(request: FastifyRequest): RequestInfo {
  const ua = request.headers['user-agent'];
  return { remoteAddress: request.ip, userAgent: typeof ua === 'string' ? ua : undefined };
}

/** Token and credential responses are never cached (RFC 6749 §5.1). */
export function sendNoStore(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-type', 'application/json; charset=utf-8')
    .send(JSON.stringify(body));
}
