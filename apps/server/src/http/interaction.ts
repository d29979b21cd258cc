import type { FastifyRequest } from 'fastify';

/** What a request asks of the FHIR API, for logs, spans and metrics. */
export interface RequestDescription {
  /** The FHIR interaction (hl7.org/fhir/R4/http.html): read, vread, update, patch, delete, history-*, create, search-*, capabilities, batch, transaction, operation. */
  interaction?: string;
  resourceType?: string;
  /** An operation's name without its `$`. */
  operation?: string;
  /** The caller's project, once the FHIR plugin knows it (undefined before sign-in, or outside the FHIR API). */
  project?: string;
  /** The caller's profile ("Practitioner/…"), as written to meta.author. */
  user?: string;
}

const TYPE = /^[A-Z][A-Za-z]{0,63}$/;
const OPERATION = /^\$[A-Za-z][\w-]{0,63}$/;

/**
 * Reads the interaction from the URL by the REST API's grammar (hl7.org/fhir/R4/http.html): the
 * same for every route under /fhir/R4 and /api/fhir/R4, Binary's and operations' included, so no
 * list of routes is kept in step with the FHIR plugin. Requests outside the FHIR API have no
 * interaction. A batch and a transaction are told apart by the Bundle's type.
 */
export function describeRequest(request: FastifyRequest): RequestDescription {
  const description = describeFhirUrl(request.method, request.url, request.body);
  const scope = request.fhir?.repo.scope;
  if (scope) {
    description.project = scope.projectId;
    if (scope.author?.reference) {
      description.user = scope.author.reference;
    }
  }
  return description;
}

export function describeFhirUrl(method: string, url: string, body?: unknown): RequestDescription {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const start = path.startsWith('/fhir/R4') ? 8 : path.startsWith('/api/fhir/R4') ? 12 : -1;
  if (start < 0 || (path.length > start && path[start] !== '/')) {
    return {};
  }
  const segments = path.slice(start + 1).split('/');
  if (segments[segments.length - 1] === '') {
    segments.pop();
  }
  const [first, second, third, fourth] = segments;
  if (first === undefined) {
    if (method === 'POST') {
      const type = (body as { type?: unknown } | undefined)?.type;
      return { interaction: type === 'transaction' ? 'transaction' : 'batch' };
    }
    return { interaction: 'search-system' };
  }
  if (segments.length === 1) {
    if (first === 'metadata') return { interaction: 'capabilities' };
    if (first === '_history') return { interaction: 'history-system' };
    if (first === '_search') return { interaction: 'search-system' };
    if (OPERATION.test(first)) return { interaction: 'operation', operation: first.slice(1) };
  }
  if (!TYPE.test(first)) {
    return {};
  }
  const resourceType = first;
  switch (segments.length) {
    case 1:
      return { interaction: byMethod(method, 'search-type', 'create'), resourceType };
    case 2:
      if (second === '_history') return { interaction: 'history-type', resourceType };
      if (second === '_search') return { interaction: 'search-type', resourceType };
      if (OPERATION.test(second)) return { interaction: 'operation', resourceType, operation: second.slice(1) };
      return { interaction: byMethod(method, 'read', undefined), resourceType };
    case 3:
      if (third === '_history') return { interaction: 'history-instance', resourceType };
      if (OPERATION.test(third)) return { interaction: 'operation', resourceType, operation: third.slice(1) };
      return { interaction: 'search-compartment', resourceType };
    case 4:
      return third === '_history' && fourth ? { interaction: 'vread', resourceType } : { resourceType };
    default:
      return { resourceType };
  }
}

function byMethod(method: string, get: string, post: string | undefined): string | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return get;
    case 'POST':
      return post;
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return undefined;
  }
}
