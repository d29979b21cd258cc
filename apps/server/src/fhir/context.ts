import type { FastifyRequest } from 'fastify';
import { badRequest, fail, isValidId, type Resource } from '@hearth/core';
import type { FhirContext } from '../operations/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the FHIR plugin's preHandler once the caller's scope is known. */
    fhir: FhirContext;
  }
}

export function ctx(request: FastifyRequest): FhirContext {
  return request.fhir;
}

/** The query string of a request (without '?'), for conditional interactions and searches. */
export function rawQuery(request: FastifyRequest): string {
  const i = request.url.indexOf('?');
  return i < 0 ? '' : request.url.slice(i + 1);
}

/** The body as a resource of the expected type; anything else is a 400 naming what is wrong. */
export function bodyResource(request: FastifyRequest, resourceType: string): Resource {
  const body = request.body;
  if (Buffer.isBuffer(body) || typeof body !== 'object' || body === null || Array.isArray(body)) {
    fail(badRequest('Request body must be a FHIR resource in JSON'));
  }
  const resource = body as Resource;
  if (resource.resourceType !== resourceType) {
    fail(
      badRequest(
        `Resource type in body (${String(resource.resourceType)}) does not match the URL (${resourceType})`,
        'resourceType',
      ),
    );
  }
  return resource;
}

/** Parses an If-Match / ETag value (W/"3" or "3" or 3) into a version number. */
export function parseETagVersion(value: string | undefined, header = 'If-Match'): number | undefined {
  if (value === undefined || value === '') {
    return undefined;
  }
  const m = /^(?:W\/)?"?([^"]*)"?$/.exec(value.trim());
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(n) || n < 1) {
    fail(badRequest(`${header} header must be an ETag like W/"1"`));
  }
  return n;
}

export function assertIdParam(id: string): void {
  if (!isValidId(id)) {
    fail(badRequest(`Invalid resource id "${id}"`));
  }
}
