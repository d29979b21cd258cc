import {
  badRequest,
  fail,
  type CodeableConcept,
  type Coding,
  type Parameters,
  type ParametersParameter,
  type Resource,
} from '@hearth/core';
import type { OperationInput } from '../../operations/types.js';

export type ParamType =
  'string' | 'uri' | 'code' | 'integer' | 'boolean' | 'dateTime' | 'Coding' | 'CodeableConcept' | 'resource';

export interface ParamSpec {
  type: ParamType;
  /** Repeats allowed (e.g. $lookup property). */
  many?: boolean;
}

type Value = string | number | boolean | Coding | CodeableConcept | Resource;

/**
 * Reads an operation's input parameters (hl7.org/fhir/R4/operations.html#request) from the query
 * string (GET, or POST with URL parameters) and from a Parameters body (POST). `bodyResourceParam`
 * lets a POST body that is itself a resource (e.g. a ValueSet) stand for that parameter.
 * Values of the wrong type are a 400 naming the parameter; unknown parameters are ignored.
 */
export function readParams<S extends Record<string, ParamSpec>>(
  input: OperationInput,
  specs: S,
  bodyResourceParam?: { name: keyof S & string; resourceType: string },
): { [K in keyof S]?: unknown } & { parts: Map<string, ParametersParameter[]> } {
  const out: Record<string, unknown> = {};
  const parts = new Map<string, ParametersParameter[]>();
  const set = (name: string, value: Value): void => {
    const spec = specs[name];
    if (spec.many) {
      ((out[name] ??= []) as Value[]).push(value);
    } else if (out[name] !== undefined) {
      fail(badRequest(`Parameter ${name} may appear only once`, name));
    } else {
      out[name] = value;
    }
  };

  const body = input.method === 'POST' ? input.body : undefined;
  if (body !== undefined && body !== null && !Buffer.isBuffer(body) && typeof body === 'object') {
    const resource = body as Resource;
    if (resource.resourceType === 'Parameters') {
      for (const param of ((resource as Parameters).parameter ?? []) as ParametersParameter[]) {
        if (typeof param?.name !== 'string' || !(param.name in specs)) {
          continue;
        }
        if (param.part) {
          parts.set(param.name, [...(parts.get(param.name) ?? []), param]);
        }
        const value = fromParameter(param, specs[param.name]);
        if (value !== undefined) {
          set(param.name, value);
        }
      }
    } else if (bodyResourceParam && resource.resourceType === bodyResourceParam.resourceType) {
      set(bodyResourceParam.name, resource);
    } else if (typeof resource.resourceType === 'string') {
      fail(badRequest(`The request body must be a Parameters resource, not ${resource.resourceType}`));
    }
  }

  for (const [name, text] of input.query) {
    if (name in specs) {
      set(name, fromText(name, text, specs[name]));
    }
  }
  return Object.assign(out, { parts }) as { [K in keyof S]?: unknown } & { parts: Map<string, ParametersParameter[]> };
}

function fromText(name: string, text: string, spec: ParamSpec): Value {
  switch (spec.type) {
    case 'integer': {
      if (!/^-?\d{1,9}$/.test(text)) {
        fail(badRequest(`Parameter ${name} must be an integer, not "${text}"`, name));
      }
      return Number(text);
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false') {
        fail(badRequest(`Parameter ${name} must be true or false, not "${text}"`, name));
      }
      return text === 'true';
    case 'Coding':
      return tokenToCoding(text);
    case 'CodeableConcept':
      return { coding: [tokenToCoding(text)] };
    case 'resource':
      fail(badRequest(`Parameter ${name} is a resource; send it in a Parameters body with POST`, name));
    // eslint-disable-next-line no-fallthrough
    default:
      return text;
  }
}

/** A Coding in a URL as system|code (the search token syntax). */
function tokenToCoding(text: string): Coding {
  const bar = text.indexOf('|');
  return bar < 0 ? { code: text } : { system: text.slice(0, bar) || undefined, code: text.slice(bar + 1) };
}

function fromParameter(param: ParametersParameter, spec: ParamSpec): Value | undefined {
  const name = param.name;
  const p = param as unknown as Record<string, unknown>;
  switch (spec.type) {
    case 'resource':
      if (!param.resource) {
        fail(badRequest(`Parameter ${name} must carry a resource`, name));
      }
      return param.resource as Resource;
    case 'Coding':
      return expectObject(name, p.valueCoding, 'valueCoding') as Coding;
    case 'CodeableConcept':
      return expectObject(name, p.valueCodeableConcept, 'valueCodeableConcept') as CodeableConcept;
    case 'integer': {
      const v = p.valueInteger ?? p.valueUnsignedInt ?? p.valuePositiveInt;
      if (typeof v !== 'number' || !Number.isInteger(v)) {
        fail(badRequest(`Parameter ${name} must be a valueInteger`, name));
      }
      return v;
    }
    case 'boolean':
      if (typeof p.valueBoolean !== 'boolean') {
        fail(badRequest(`Parameter ${name} must be a valueBoolean`, name));
      }
      return p.valueBoolean;
    default: {
      const keys = ['valueString', 'valueUri', 'valueCode', 'valueCanonical', 'valueUrl', 'valueDateTime', 'valueDate'];
      for (const key of keys) {
        if (typeof p[key] === 'string') {
          return p[key] as string;
        }
      }
      if (param.part) {
        return undefined;
      }
      fail(badRequest(`Parameter ${name} must have a ${spec.type} value`, name));
    }
  }
}

function expectObject(name: string, value: unknown, key: string): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(badRequest(`Parameter ${name} must have a ${key}`, name));
  }
  return value;
}

/** Builds an output parameter with the value[x] key matching its type. */
export function out(name: string, type: string, value: unknown): ParametersParameter {
  return { name, [`value${type}`]: value } as ParametersParameter;
}

export function parameters(list: (ParametersParameter | undefined | false)[]): Parameters {
  return { resourceType: 'Parameters', parameter: list.filter((p): p is ParametersParameter => !!p) };
}

/** Checks a count/offset style integer. */
export function nonNegative(name: string, value: unknown, max?: number): number | undefined {
  if (value === undefined) {
    return undefined;
  }
  const n = value as number;
  if (n < 0 || (max !== undefined && n > max)) {
    fail(badRequest(`Parameter ${name} must be between 0 and ${max ?? 'a large number'}`, name));
  }
  return n;
}
