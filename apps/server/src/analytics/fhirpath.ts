/**
 * The FHIRPath of SQL on FHIR v2 (build.fhir.org/ig/FHIR/sql-on-fhir-v2/StructureDefinition-ViewDefinition.html#fhirpath-functionality):
 * the `fhirpath` package with the R4 model, plus the view functions getResourceKey() and
 * getReferenceKey([type]), and the spec's readings of join() (an empty collection joins to '') and
 * lowBoundary()/highBoundary() (decimals keep their written precision, dateTimes without an offset
 * span +14:00 to -12:00). Constants become literals of their FHIR type, so `birthDate = %bd` compares
 * dates, not a date with a string.
 */
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import { decimalBoundary, temporalBoundary } from './boundaries.js';
import { decimalText } from '../storage/decimal-json.js';

/** A compiled expression: its result collection as JSON values. */
export type CompiledPath = (input: unknown, variables: Record<string, unknown>) => unknown[];

interface Node {
  data?: unknown;
  propName?: string | null;
  index?: number | null;
  parentResNode?: Node | null;
  getTypeInfo?: () => { name: string };
}

/** The value of a ResourceNode (functions below get the engine's nodes, to know an element's FHIR type). */
const valueOf = (item: unknown): unknown =>
  item && typeof item === 'object' && typeof (item as Node).getTypeInfo === 'function' ? (item as Node).data : item;

/** The key of a resource: its id (a view's getReferenceKey() of a reference to it answers the same). */
function getResourceKey(inputs: unknown[]): unknown[] {
  return inputs.flatMap((item) => {
    const data = valueOf(item) as { resourceType?: unknown; id?: unknown } | undefined;
    return data && typeof data.resourceType === 'string' && typeof data.id === 'string' ? [data.id] : [];
  });
}

/**
 * The key a Reference points at: the id of a relative or absolute literal reference `[base/]Type/id[/_history/v]`,
 * when its type is `type` (or any type when none is given); nothing for contained or conditional references.
 */
function getReferenceKey(inputs: unknown[], type?: { name?: string }): unknown[] {
  return inputs.flatMap((item) => {
    const ref = (valueOf(item) as { reference?: unknown } | undefined)?.reference;
    if (typeof ref !== 'string') return [];
    const m = /(?:^|\/)([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]+)?$/.exec(ref);
    if (!m) return [];
    if (type?.name && type.name !== m[1]) return [];
    return [m[2]];
  });
}

function join(inputs: unknown[], separator?: string): unknown[] {
  return [inputs.map((item) => String(valueOf(item))).join(separator ?? '')];
}

/** The FHIR type of a boundary input: from the model for resource elements, from the value for literals. */
function kindOf(item: unknown): string | undefined {
  const node = item as Node;
  if (typeof node?.getTypeInfo === 'function') return node.getTypeInfo().name;
  const name = (item as object)?.constructor?.name;
  if (name === 'FP_Date') return 'date';
  if (name === 'FP_DateTime') return 'dateTime';
  if (name === 'FP_Time') return 'time';
  if (typeof item === 'number') return Number.isInteger(item) ? 'integer' : 'decimal';
  return undefined;
}

/** The text a number was written with: kept by the JSON parser for resource elements, else its shortest form. */
function numberText(item: unknown, value: number): string {
  const node = item as Node;
  const holder = node?.parentResNode?.data;
  if (holder && typeof holder === 'object' && node.propName) {
    const inHolder = (holder as Record<string, unknown>)[node.propName];
    const text =
      node.index !== null && node.index !== undefined && Array.isArray(inHolder)
        ? decimalText(inHolder, node.index)
        : decimalText(holder, node.propName);
    if (text !== undefined) return text;
  }
  return String(value);
}

function boundary(high: boolean) {
  return (inputs: unknown[], precision?: number): unknown[] =>
    inputs.flatMap((item): unknown[] => {
      const kind = kindOf(item);
      const raw = valueOf(item);
      // Numbers come wrapped as the engine's decimals, dates of literals as its date objects.
      const value =
        typeof raw === 'object' && raw !== null
          ? typeof (raw as { toNumber?: unknown }).toNumber === 'function'
            ? (raw as { toNumber(): number }).toNumber()
            : String(raw)
          : raw;
      if ((kind === 'decimal' || kind === 'integer') && typeof value === 'number') {
        const out = decimalBoundary(value, numberText(item, value), high, precision);
        return out === undefined ? [] : [out];
      }
      if (
        (kind === 'date' || kind === 'dateTime' || kind === 'instant' || kind === 'time') &&
        typeof value === 'string'
      ) {
        const out = temporalBoundary(kind === 'instant' ? 'dateTime' : kind, value.replace(/^@/, ''), high, precision);
        return out === undefined ? [] : [out];
      }
      return [];
    });
}

const USER_FUNCTIONS = {
  getResourceKey: { fn: getResourceKey, arity: { 0: [] }, internalStructures: true },
  getReferenceKey: { fn: getReferenceKey, arity: { 0: [], 1: ['TypeSpecifier'] }, internalStructures: true },
  join: { fn: join, arity: { 0: [], 1: ['String'] }, internalStructures: true },
  lowBoundary: { fn: boundary(false), arity: { 0: [], 1: ['Integer'] }, internalStructures: true },
  highBoundary: { fn: boundary(true), arity: { 0: [], 1: ['Integer'] }, internalStructures: true },
};

/** Compiles an expression (throws on a syntax error or an unknown function). */
export function compilePath(expression: string): CompiledPath {
  const fn = fhirpath.compile(expression, r4Model, { userInvocationTable: USER_FUNCTIONS } as never) as unknown as (
    input: unknown,
    env: Record<string, unknown>,
  ) => unknown[];
  return (input, variables) => fn(input, variables);
}
