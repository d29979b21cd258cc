/**
 * The instance side of profile validation: the values of an element in a JSON resource (with
 * their type and FHIRPath-like expression), and the fixed / pattern comparisons
 * (hl7.org/fhir/R4/elementdefinition-definitions.html#ElementDefinition.fixed_x_, .pattern_x_).
 */
import type { ValidatorSchema } from './schema.js';

export interface Item {
  value: unknown;
  /** The value's type when known ('Quantity', 'string', 'Patient'). */
  type?: string;
  /** Where it is: 'Patient.identifier[1]'. */
  expression: string;
}

type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** The type a typed choice name's suffix stands for: 'Quantity' → 'Quantity', 'DateTime' → 'dateTime'. */
export function typeOfSuffix(suffix: string, schema: ValidatorSchema): string {
  const lower = lowerFirst(suffix);
  return schema.types[lower]?.kind === 'primitive-type' ? lower : suffix;
}

function push(out: Item[], value: unknown, type: string | undefined, expression: string): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (v !== null && v !== undefined) {
        out.push({ value: v, type: typeOf(v, type), expression: `${expression}[${i}]` });
      }
    });
  } else if (value !== undefined && value !== null) {
    out.push({ value, type: typeOf(value, type), expression });
  }
}

function typeOf(value: unknown, declared: string | undefined): string | undefined {
  if (isObject(value) && typeof value.resourceType === 'string' && (!declared || declared === 'Resource')) {
    return value.resourceType;
  }
  return declared;
}

/**
 * The values of element `name` in `parent`; 'value[x]' gathers every typed name (valueQuantity…).
 */
export function childItems(
  parent: Item,
  name: string,
  declaredType: string | undefined,
  schema: ValidatorSchema,
): Item[] {
  const obj = parent.value;
  const out: Item[] = [];
  if (!isObject(obj)) {
    return out;
  }
  const choice = name.endsWith('[x]') ? name.slice(0, -3) : undefined;
  if (choice === undefined) {
    push(out, obj[name], declaredType, `${parent.expression}.${name}`);
    return out;
  }
  for (const key of Object.keys(obj)) {
    if (key.length > choice.length && key.startsWith(choice)) {
      const suffix = key.slice(choice.length);
      if (suffix.charCodeAt(0) >= 65 && suffix.charCodeAt(0) <= 90) {
        push(out, obj[key], typeOfSuffix(suffix, schema), `${parent.expression}.${key}`);
      }
    }
  }
  return out;
}

/** fixed[x]: exactly this value, nothing more and nothing less. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  // A decimal fixed as 1.0 equals 1 in JSON numbers.
  return typeof a === 'number' && typeof b === 'number' && a === b;
}

/**
 * pattern[x]: every property of the pattern is in the value with the same content; each item of a
 * pattern array matches some item of the value's array; primitives are equal.
 */
export function matchesPattern(value: unknown, pattern: unknown): boolean {
  if (Array.isArray(pattern)) {
    const values = Array.isArray(value) ? value : [value];
    return pattern.every((p) => values.some((v) => matchesPattern(v, p)));
  }
  if (isObject(pattern)) {
    if (!isObject(value)) {
      return false;
    }
    return Object.keys(pattern).every((k) => pattern[k] === undefined || matchesPattern(value[k], pattern[k]));
  }
  return value === pattern;
}
