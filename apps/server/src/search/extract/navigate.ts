/**
 * Navigation over FHIR JSON guided by the type schema: child elements (choice elements
 * expanded to their typed names), type tests with inheritance (Age is a Quantity), and the
 * target type of a Reference. Used by the compiled expressions of path-compiler.ts.
 */
import { FHIR_PRIMITIVE_TYPES } from '@hearth/core';
import { getTypeSchema, type TypeSchema } from '@hearth/definitions';

/** A value with its FHIR type ('HumanName', 'dateTime', 'Observation.component'), when known. */
export interface TypedValue {
  value: unknown;
  type?: string;
}

/** A step of a compiled expression: a collection in, a collection out. */
export type Step = (nodes: TypedValue[], resource: Record<string, unknown>) => TypedValue[];

export function isKnownType(name: string): boolean {
  return getTypeSchema(name) !== undefined;
}

const schemaCache = new Map<string, TypeSchema | null>();
function schemaOf(type: string | undefined): TypeSchema | undefined {
  if (!type) return undefined;
  let s = schemaCache.get(type);
  if (s === undefined) {
    s = getTypeSchema(type) ?? null;
    schemaCache.set(type, s);
  }
  return s ?? undefined;
}

/** The type of an element value: a contained resource is typed by its resourceType. */
function typeOfValue(declared: string | undefined, value: unknown): string | undefined {
  if ((declared === 'Resource' || declared === 'DomainResource') && value && typeof value === 'object') {
    return String((value as { resourceType?: unknown }).resourceType ?? declared);
  }
  return declared;
}

function push(out: TypedValue[], raw: unknown, type: string | undefined): void {
  if (raw === undefined || raw === null) return;
  if (Array.isArray(raw)) {
    for (const item of raw) {
      if (item !== undefined && item !== null) out.push({ value: item, type: typeOfValue(type, item) });
    }
  } else {
    out.push({ value: raw, type: typeOfValue(type, raw) });
  }
}

function upperFirst(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** How a child name reads on one type: a plain element, a choice's typed names, or nothing. */
type ChildPlan = { kind: 'direct'; type?: string } | { kind: 'choice'; keys: [string, string][] } | { kind: 'none' };

/** Navigates to a child element, expanding choice elements (value -> valueQuantity, ...). */
export function child(name: string): Step {
  const plans = new Map<string, ChildPlan>();
  const planFor = (type: string): ChildPlan | undefined => {
    let plan = plans.get(type);
    if (!plan) {
      const schema = schemaOf(type);
      if (!schema) return undefined;
      const el = Object.hasOwn(schema.elements, name) ? schema.elements[name] : undefined;
      const choice = schema.elements[`${name}[x]`];
      plan = el
        ? { kind: 'direct', type: el.type.length === 1 ? el.type[0].code : undefined }
        : choice
          ? { kind: 'choice', keys: choice.type.map((t) => [name + upperFirst(t.code), t.code]) }
          : { kind: 'none' };
      plans.set(type, plan);
    }
    return plan;
  };
  return (nodes) => {
    const out: TypedValue[] = [];
    for (const node of nodes) {
      const v = node.value;
      if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
      const obj = v as Record<string, unknown>;
      if (name === 'resourceType') {
        push(out, obj.resourceType, 'code');
        continue;
      }
      const plan = node.type ? planFor(node.type) : undefined;
      if (plan) {
        if (plan.kind === 'direct') {
          push(out, obj[name], plan.type);
        } else if (plan.kind === 'choice') {
          for (const [key, type] of plan.keys) {
            if (obj[key] !== undefined) push(out, obj[key], type);
          }
        }
        continue;
      }
      // No definition (an unknown extension type): read the property, or guess a choice by its name.
      if (obj[name] !== undefined) {
        push(out, obj[name], undefined);
        continue;
      }
      for (const key of Object.keys(obj)) {
        if (key.length > name.length && key.startsWith(name) && /[A-Z]/.test(key[name.length])) {
          const suffix = key.slice(name.length);
          const lower = suffix.charAt(0).toLowerCase() + suffix.slice(1);
          push(out, obj[key], FHIR_PRIMITIVE_TYPES.has(lower) ? lower : suffix);
        }
      }
    }
    return out;
  };
}

const typeMatches = new Map<string, boolean>();

/** True when the node's type is `name` or derives from it (Age is a Quantity). */
export function isOfType(node: TypedValue, name: string): boolean {
  const start = node.type ?? inferType(node.value);
  if (!start) return false;
  if (start === name) return true;
  const cacheKey = `${start}|${name}`;
  let result = typeMatches.get(cacheKey);
  if (result === undefined) {
    result = false;
    const wanted = name.toLowerCase();
    let t: string | undefined = start;
    for (let depth = 0; t && depth < 8; depth++) {
      if (t.toLowerCase() === wanted) {
        result = true;
        break;
      }
      if ((wanted === 'resource' || wanted === 'domainresource') && schemaOf(t)?.kind === 'resource') {
        result = true;
        break;
      }
      t = schemaOf(t)?.base;
    }
    typeMatches.set(cacheKey, result);
  }
  return result;
}

function inferType(value: unknown): string | undefined {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'decimal';
  if (typeof value === 'string') return 'string';
  if (value && typeof value === 'object' && 'resourceType' in value) {
    return String((value as { resourceType: unknown }).resourceType);
  }
  return undefined;
}

export function ofType(name: string): Step {
  return (nodes) => nodes.filter((n) => isOfType(n, name));
}

/** The type a Reference points at: its `type`, the type in its URL, or a contained resource's type. */
export function referenceTargetType(value: unknown, resource: Record<string, unknown>): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const ref = value as { reference?: unknown; type?: unknown };
  if (typeof ref.reference === 'string') {
    const r = ref.reference;
    if (r.startsWith('#')) {
      const contained = (resource.contained as { id?: string; resourceType?: string }[] | undefined) ?? [];
      return contained.find((c) => c.id === r.slice(1))?.resourceType;
    }
    const m = /(?:^|\/)([A-Z][A-Za-z]+)\/[A-Za-z0-9\-.]{1,64}(?:\/_history\/[^/]+)?$/.exec(r);
    if (m) return m[1];
  }
  return typeof ref.type === 'string' ? ref.type : undefined;
}
