// Reading a batch or transaction Bundle's entries: hl7.org/fhir/R4/http.html#transaction
import { badRequest, fail, isValidId, payloadTooLarge, type Bundle, type Resource } from '@hearth/core';
import { parseETagVersion } from '../context.js';

export type EntryMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** What an entry's request.url names, relative to the FHIR base. */
export interface EntryTarget {
  resourceType?: string;
  id?: string;
  versionId?: string;
  /** '_history' or '_search' after the type or id. */
  special?: '_history' | '_search';
  /** The query string without '?'. */
  query: string;
}

export interface RequestEntry {
  index: number;
  fullUrl?: string;
  method: EntryMethod;
  url: string;
  target: EntryTarget;
  resource?: Resource;
  ifMatch?: number;
  ifNoneExist?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: string;
}

const METHODS = new Set<EntryMethod>(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH']);

export function assertBundleType(body: unknown): 'batch' | 'transaction' {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    fail(badRequest('POST to the FHIR base takes a batch or transaction Bundle'));
  }
  const bundle = body as Bundle;
  if (bundle.resourceType !== 'Bundle') {
    fail(badRequest('POST to the FHIR base takes a Bundle', 'resourceType'));
  }
  if (bundle.type !== 'batch' && bundle.type !== 'transaction') {
    fail(badRequest(`Bundle.type must be batch or transaction, not ${String(bundle.type)}`, 'Bundle.type'));
  }
  return bundle.type;
}

/**
 * Checks the shape of every entry up front. For a batch a malformed entry is answered in its own
 * response entry, so errors are returned per entry instead of thrown.
 */
export function parseEntries(
  bundle: Bundle,
  fhirBase: string,
  maxEntries: number,
): { entries: RequestEntry[]; errors: Map<number, unknown> } {
  const raw = bundle.entry ?? [];
  if (!Array.isArray(raw)) {
    fail(badRequest('Bundle.entry must be an array', 'Bundle.entry'));
  }
  if (raw.length > maxEntries) {
    fail(payloadTooLarge(`The Bundle has ${raw.length} entries; this server takes at most ${maxEntries}`));
  }
  const entries: RequestEntry[] = [];
  const errors = new Map<number, unknown>();
  raw.forEach((entry, index) => {
    try {
      entries.push(parseEntry(entry, index, fhirBase));
    } catch (err) {
      errors.set(index, err);
    }
  });
  return { entries, errors };
}

function parseEntry(entry: unknown, index: number, fhirBase: string): RequestEntry {
  const where = `Bundle.entry[${index}]`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    fail(badRequest('A Bundle entry must be an object', where));
  }
  const e = entry as Record<string, unknown>;
  const request = e.request as Record<string, unknown> | undefined;
  if (typeof request !== 'object' || request === null) {
    fail(badRequest('Each entry of a batch or transaction needs a request', `${where}.request`));
  }
  const method = String(request.method ?? '').toUpperCase() as EntryMethod;
  if (!METHODS.has(method)) {
    fail(badRequest(`Unsupported request.method "${String(request.method)}"`, `${where}.request.method`));
  }
  if (typeof request.url !== 'string' || request.url.trim() === '') {
    fail(badRequest('request.url is required', `${where}.request.url`));
  }
  const url = relativeUrl(request.url.trim(), fhirBase, `${where}.request.url`);
  const target = parseTarget(url, `${where}.request.url`);
  const resource = e.resource as Resource | undefined;
  if (resource !== undefined && (typeof resource !== 'object' || resource === null || Array.isArray(resource))) {
    fail(badRequest('entry.resource must be a resource', `${where}.resource`));
  }
  if ((method === 'POST' || method === 'PUT') && !resource) {
    fail(badRequest(`A ${method} entry needs a resource`, `${where}.resource`));
  }
  if ((method === 'POST' || method === 'PUT') && resource?.resourceType !== target.resourceType) {
    fail(
      badRequest(
        `Resource type ${String(resource?.resourceType)} does not match request.url ${url}`,
        `${where}.resource.resourceType`,
      ),
    );
  }
  const str = (name: string): string | undefined => {
    const v = request[name];
    if (v !== undefined && typeof v !== 'string') {
      fail(badRequest(`request.${name} must be a string`, `${where}.request.${name}`));
    }
    return v === '' ? undefined : v;
  };
  const fullUrl = e.fullUrl;
  if (fullUrl !== undefined && typeof fullUrl !== 'string') {
    fail(badRequest('fullUrl must be a string', `${where}.fullUrl`));
  }
  return {
    index,
    fullUrl,
    method,
    url,
    target,
    resource,
    ifMatch: parseETagVersion(str('ifMatch'), `${where}.request.ifMatch`),
    ifNoneExist: str('ifNoneExist')?.replace(/^[^?]*\?/, ''),
    ifNoneMatch: str('ifNoneMatch'),
    ifModifiedSince: str('ifModifiedSince'),
  };
}

/** request.url may be relative to the base or absolute with this server's base. */
function relativeUrl(url: string, fhirBase: string, where: string): string {
  if (url.startsWith(fhirBase)) {
    return url.slice(fhirBase.length);
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    fail(badRequest(`request.url ${url} is not on this server`, where));
  }
  return url.replace(/^\/+/, '');
}

function parseTarget(url: string, where: string): EntryTarget {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const parts = path.split('/').filter(Boolean);
  const bad = (): never =>
    fail(badRequest(`request.url ${url} is not a FHIR interaction this server takes in a Bundle`, where));
  if (parts.some((p) => p.startsWith('$'))) {
    bad();
  }
  if (parts.length === 0) {
    return { query };
  }
  if (parts[0] === '_history' || parts[0] === '_search') {
    return parts.length === 1 ? { special: parts[0], query } : bad();
  }
  const [resourceType, second, third, fourth] = parts;
  if (!/^[A-Z][A-Za-z]+$/.test(resourceType) || parts.length > 4) {
    bad();
  }
  if (second === undefined) {
    return { resourceType, query };
  }
  if (second === '_history' || second === '_search') {
    return parts.length === 2 ? { resourceType, special: second, query } : bad();
  }
  if (!isValidId(second)) {
    fail(badRequest(`Invalid resource id "${second}" in request.url`, where));
  }
  if (third === undefined) {
    return { resourceType, id: second, query };
  }
  if (third !== '_history') {
    bad();
  }
  return { resourceType, id: second, special: '_history', versionId: fourth, query };
}
