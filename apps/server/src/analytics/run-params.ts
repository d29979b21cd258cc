/**
 * The parameters of ViewDefinition/$run (build.fhir.org/ig/FHIR/sql-on-fhir-v2/OperationDefinition-ViewDefinitionRun.html),
 * from the query string (GET, or POST beside a body) and from a Parameters body (POST).
 */
import { badRequest, fail, type Resource } from '@hearth/core';
import type { OperationInput } from '../operations/types.js';
import { runFormat, type RunFormat } from './formats.js';

export interface RunParams {
  format: RunFormat;
  header: boolean;
  /** The inline view (viewResource). */
  viewResource?: Record<string, unknown>;
  /** A stored view by reference (viewReference: ViewDefinition/{id}). */
  viewId?: string;
  limit?: number;
  since?: string;
  patient?: string;
  /** Inline data (resource): the view runs over these instead of the caller's stored resources. */
  resources?: Resource[];
}

interface Parameter {
  name?: unknown;
  resource?: unknown;
  valueReference?: { reference?: unknown };
  [value: string]: unknown;
}

const KNOWN = new Set([
  '_format',
  'header',
  'viewResource',
  'viewReference',
  '_limit',
  '_since',
  'patient',
  'resource',
]);
const ID = /^[A-Za-z0-9\-.]{1,64}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

function idOf(reference: string, type: string, where: string): string {
  const m = new RegExp(`^(?:.*/)?${type}/([^/]+)$`).exec(reference);
  if (!m || !ID.test(m[1])) fail(badRequest(`${where} must reference a ${type} (${type}/{id})`, where));
  return m[1];
}

/** The primitive value of a parameter (valueCode, valueString, valueBoolean, ...). */
function primitive(p: Parameter): unknown {
  const key = Object.keys(p).find((k) => k.startsWith('value') && k !== 'valueReference');
  return key ? p[key] : undefined;
}

export function runParams(input: Pick<OperationInput, 'query' | 'body' | 'method'>): RunParams {
  const values = new Map<string, unknown>();
  const resources: Resource[] = [];
  for (const [name, value] of input.query) {
    if (!KNOWN.has(name) && !name.startsWith('_')) fail(badRequest(`$run has no parameter ${name}`, name));
    values.set(name, value);
  }
  const body = input.body as { resourceType?: unknown; parameter?: unknown } | undefined;
  if (input.method === 'POST' && body !== undefined && body !== null) {
    if (typeof body !== 'object' || Buffer.isBuffer(body) || body.resourceType !== 'Parameters') {
      fail(badRequest('ViewDefinition/$run takes a Parameters resource in a POST body'));
    }
    const list = Array.isArray(body.parameter) ? (body.parameter as Parameter[]) : [];
    list.forEach((p, i) => {
      const where = `Parameters.parameter[${i}]`;
      if (typeof p?.name !== 'string') fail(badRequest('Each parameter needs a name', where));
      if (!KNOWN.has(p.name)) fail(badRequest(`$run has no parameter ${p.name}`, where));
      if (p.name === 'resource') {
        if (!p.resource || typeof p.resource !== 'object') fail(badRequest('resource must carry a resource', where));
        resources.push(p.resource as Resource);
      } else if (p.name === 'viewResource') {
        if (!p.resource || typeof p.resource !== 'object') {
          fail(badRequest('viewResource must carry a ViewDefinition', where));
        }
        values.set('viewResource', p.resource);
      } else if (p.valueReference) {
        values.set(p.name, p.valueReference.reference);
      } else {
        values.set(p.name, primitive(p));
      }
    });
  }
  const formatName = values.get('_format') ?? 'json';
  const format = typeof formatName === 'string' ? runFormat(formatName) : undefined;
  if (!format) fail(badRequest(`_format ${String(formatName)} is not one of csv, ndjson, json, parquet`, '_format'));
  const header = values.get('header');
  if (header !== undefined && header !== true && header !== false && header !== 'true' && header !== 'false') {
    fail(badRequest('header must be true or false', 'header'));
  }
  const out: RunParams = { format, header: header !== false && header !== 'false' };
  const view = values.get('viewResource');
  if (view !== undefined) {
    if (typeof view !== 'object' || (view as { resourceType?: unknown }).resourceType !== 'ViewDefinition') {
      fail(badRequest('viewResource must be a ViewDefinition', 'viewResource'));
    }
    out.viewResource = view as Record<string, unknown>;
  }
  const reference = values.get('viewReference');
  if (reference !== undefined) {
    if (typeof reference !== 'string') fail(badRequest('viewReference must be a reference', 'viewReference'));
    out.viewId = idOf(reference, 'ViewDefinition', 'viewReference');
  }
  const limit = values.get('_limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1) fail(badRequest('_limit must be a positive integer', '_limit'));
    out.limit = n;
  }
  const since = values.get('_since');
  if (since !== undefined) {
    if (typeof since !== 'string' || !INSTANT.test(since) || Number.isNaN(Date.parse(since))) {
      fail(badRequest('_since must be an instant (e.g. 2024-01-01T00:00:00Z)', '_since'));
    }
    out.since = since;
  }
  const patient = values.get('patient');
  if (patient !== undefined) {
    if (typeof patient !== 'string') fail(badRequest('patient must be a reference', 'patient'));
    out.patient = idOf(patient, 'Patient', 'patient');
  }
  if (resources.length > 0) out.resources = resources;
  return out;
}
