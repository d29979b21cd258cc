/**
 * FHIRPath (hl7.org/fhirpath/N1) over the `fhirpath` package with the R4 model, so that choice
 * elements (`Observation.value`), `ofType()` and type checks work. Compiled expressions are cached.
 */
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';

/** A FHIRPath result with its type: a FHIR type name ('date', 'HumanName') or a FHIRPath system one. */
export interface TypedValue {
  readonly type: string;
  readonly value: unknown;
}

/** Variables for an expression (`%name`); %resource, %context and %ucum are set by the engine. */
export type FhirPathVariables = Record<string, unknown>;

type Evaluator = (resource: unknown, variables?: FhirPathVariables) => unknown[];

const MAX_CACHED = 1000;
const resolved = new Map<string, Evaluator>();
const unresolved = new Map<string, Evaluator>();

function compiled(expression: string, resolveInternalTypes: boolean): Evaluator {
  const cache = resolveInternalTypes ? resolved : unresolved;
  let evaluator = cache.get(expression);
  if (!evaluator) {
    if (cache.size >= MAX_CACHED) {
      cache.clear();
    }
    const fn = fhirpath.compile(expression, r4Model, { resolveInternalTypes });
    evaluator = (resource, variables) => fn(resource, (variables ?? {}) as never) as unknown[];
    cache.set(expression, evaluator);
  }
  return evaluator;
}

/**
 * Evaluates a FHIRPath expression against a resource (or any FHIR JSON) and returns the result
 * collection as plain JSON values. Throws on a syntax error.
 *
 * ```ts
 * evalFhirPath<string>('Patient.name.given', patient) // ['Ada', 'King']
 * ```
 */
export function evalFhirPath<T = unknown>(expression: string, input: unknown, variables?: FhirPathVariables): T[] {
  return compiled(expression, true)(input, variables) as T[];
}

const SYSTEM_TYPES: Record<string, string> = {
  'System.String': 'string',
  'System.Boolean': 'boolean',
  'System.Integer': 'integer',
  'System.Decimal': 'decimal',
  'System.Date': 'date',
  'System.DateTime': 'dateTime',
  'System.Time': 'time',
  'System.Quantity': 'Quantity',
};

/** Like evalFhirPath, with each value's type ('string', 'date', 'HumanName', 'Patient', ...). */
export function evalFhirPathTyped(expression: string, input: unknown, variables?: FhirPathVariables): TypedValue[] {
  const raw = compiled(expression, false)(input, variables);
  const types = fhirpath.types(raw);
  const values = fhirpath.resolveInternalTypes(raw) as unknown[];
  return values.map((value, i) => {
    const type = types[i] ?? '';
    return { type: SYSTEM_TYPES[type] ?? type.replace(/^FHIR\./, ''), value };
  });
}

/**
 * Evaluates an expression as a condition (FHIRPath singleton evaluation of collections,
 * hl7.org/fhirpath/N1/#singleton-evaluation-of-collections): true only for exactly `[true]`, or a
 * single non-boolean item.
 */
export function evalFhirPathBoolean(expression: string, input: unknown, variables?: FhirPathVariables): boolean {
  const result = evalFhirPath(expression, input, variables);
  if (result.length !== 1) {
    return false;
  }
  return typeof result[0] === 'boolean' ? result[0] : true;
}

/** The first value of the result, as a string, or undefined when the result is empty. */
export function evalFhirPathString(
  expression: string,
  input: unknown,
  variables?: FhirPathVariables,
): string | undefined {
  const [first] = evalFhirPath(expression, input, variables);
  return first === undefined || first === null
    ? undefined
    : typeof first === 'object'
      ? JSON.stringify(first)
      : String(first);
}
