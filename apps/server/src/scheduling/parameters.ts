// The parameters of the scheduling operations, from the query string and a Parameters body
// (hl7.org/fhir/R4/operations.html#request): each value as text, or a resource part.
import { badRequest, fail, unprocessable, type Resource } from '@hearth/core';
import type { OperationInput } from '../operations/types.js';

type Json = Record<string, unknown>;

export interface OperationParameters {
  /** The one value of a parameter given at most once (a second is a 400). */
  get(name: string): string | undefined;
  all(name: string): string[];
  /** A parameter's resource part (Parameters.parameter.resource). */
  resource(name: string): Resource | undefined;
}

const REFERENCE = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/;

/** The text of a value[x]: a reference's `reference`, a Coding's system|code, a primitive as given. */
function valueText(p: Json, where: string): string | undefined {
  for (const [key, value] of Object.entries(p)) {
    if (!key.startsWith('value')) continue;
    if (key === 'valueReference') {
      const ref = (value as { reference?: unknown }).reference;
      if (typeof ref !== 'string') fail(badRequest(`${where}.valueReference needs a reference`, where));
      return ref;
    }
    if (key === 'valueCoding') {
      const c = value as { system?: string; code?: string };
      return c.system ? `${c.system}|${c.code ?? ''}` : c.code;
    }
    if (['string', 'number', 'boolean'].includes(typeof value)) return String(value);
    fail(badRequest(`${where}.${key} is not a value this operation takes`, where));
  }
  return undefined;
}

/** Reads and checks the parameters: an unknown name is a 422 naming it (hl7.org/fhir/R4/operations.html). */
export function readParameters(input: OperationInput, operation: string, supported: string[]): OperationParameters {
  const values = new Map<string, string[]>();
  const resources = new Map<string, Resource>();
  const add = (name: string, value: string) => values.set(name, [...(values.get(name) ?? []), value]);
  for (const [name, value] of input.query) add(name, value);
  const body = input.body as { resourceType?: string; parameter?: unknown } | undefined;
  if (input.method === 'POST' && body !== undefined && body !== null && !(typeof body === 'string' && body === '')) {
    if (typeof body !== 'object' || Buffer.isBuffer(body) || body.resourceType !== 'Parameters') {
      fail(badRequest(`${operation} takes a Parameters resource in a POST body`));
    }
    if (body.parameter !== undefined && !Array.isArray(body.parameter)) {
      fail(badRequest('Parameters.parameter must be a list', 'Parameters.parameter'));
    }
    for (const [i, p] of ((body.parameter ?? []) as Json[]).entries()) {
      const where = `Parameters.parameter[${i}]`;
      if (typeof p?.name !== 'string') fail(badRequest('Each parameter needs a name', where));
      if (p.resource !== undefined) {
        const r = p.resource as Resource;
        if (typeof r !== 'object' || r === null || typeof r.resourceType !== 'string') {
          fail(badRequest(`${where}.resource must be a resource`, where));
        }
        resources.set(p.name, r);
        continue;
      }
      const text = valueText(p, where);
      if (text === undefined) fail(badRequest(`Parameter ${p.name} has no value`, where));
      add(p.name, text);
    }
  }
  for (const name of [...values.keys(), ...resources.keys()]) {
    if (!supported.includes(name) && !name.startsWith('_')) {
      fail(
        unprocessable(`${operation}: parameter "${name}" is not supported (it takes ${supported.join(', ')})`, name),
      );
    }
  }
  return {
    get(name) {
      const list = values.get(name) ?? [];
      if (list.length > 1) fail(badRequest(`${operation}: parameter ${name} may be given once`, name));
      return list[0] === '' ? undefined : list[0];
    },
    all: (name) => (values.get(name) ?? []).filter((v) => v !== ''),
    resource: (name) => resources.get(name),
  };
}

/** A reference parameter checked against the types it may name; answers [type, id]. */
export function referenceParam(
  params: OperationParameters,
  name: string,
  types: string[],
  required: true,
): [string, string];
export function referenceParam(
  params: OperationParameters,
  name: string,
  types: string[],
  required?: false,
): [string, string] | undefined;
export function referenceParam(
  params: OperationParameters,
  name: string,
  types: string[],
  required = false,
): [string, string] | undefined {
  const value = params.get(name);
  if (value === undefined) {
    if (required) fail(badRequest(`Parameter ${name} is required (${types.join(' or ')} reference)`, name));
    return undefined;
  }
  const m = REFERENCE.exec(value);
  if (!m || !types.includes(m[1])) {
    fail(badRequest(`Parameter ${name} must be a reference to ${types.join(' or ')} (Type/id), not "${value}"`, name));
  }
  return [m[1], m[2]];
}

const INSTANT_OR_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * A date or dateTime parameter as epoch ms; a date is the start of its UTC day, or with
 * `endOfDay` the start of the next one (so `end=2026-03-06` includes the 6th).
 */
export function instantParam(params: OperationParameters, name: string, endOfDay = false): number | undefined {
  const value = params.get(name);
  if (value === undefined) return undefined;
  const ms = INSTANT_OR_DATE.test(value) ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value) : NaN;
  if (Number.isNaN(ms)) {
    fail(badRequest(`Parameter ${name} must be a date (2026-03-02) or a dateTime with a time zone`, name));
  }
  return value.length === 10 && endOfDay ? ms + 86_400_000 : ms;
}
