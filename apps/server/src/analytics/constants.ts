/**
 * ViewDefinition.constant (build.fhir.org/ig/FHIR/sql-on-fhir-v2/StructureDefinition-ViewDefinition.html#constants):
 * each `%name` in a path is replaced by a FHIRPath literal of the constant's FHIR type before the path is
 * compiled, so that dates compare as dates and integers index collections. A `%name` that is neither a
 * constant nor a variable the engine knows is an error of the view.
 */
import { ViewError } from './view-error.js';

/** The value[x] types a constant may have, and how each is written as a FHIRPath literal. */
const LITERALS: Record<string, (value: unknown) => string | undefined> = {
  base64Binary: quoted,
  canonical: quoted,
  code: quoted,
  id: quoted,
  oid: quoted,
  string: quoted,
  uri: quoted,
  url: quoted,
  uuid: quoted,
  markdown: quoted,
  boolean: (v) => (typeof v === 'boolean' ? String(v) : undefined),
  integer: integer,
  integer64: (v) => (typeof v === 'string' && /^-?\d+$/.test(v) ? v : integer(v)),
  positiveInt: integer,
  unsignedInt: integer,
  decimal: (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined),
  date: (v) => (typeof v === 'string' && /^\d{4}(-\d{2}(-\d{2})?)?$/.test(v) ? `@${v}` : undefined),
  dateTime: dateTime,
  instant: dateTime,
  time: (v) => (typeof v === 'string' && /^\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(v) ? `@T${v}` : undefined),
};

function quoted(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function integer(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? String(value) : undefined;
}

function dateTime(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{4}(-\d{2}(-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?)?)?$/.test(value)) {
    return undefined;
  }
  // A dateTime literal needs its T even when it stops at the day (hl7.org/fhirpath/N1/#datetime).
  return value.includes('T') ? `@${value}` : `@${value}T`;
}

/** Variables the engine defines itself (hl7.org/fhirpath/N1/#environment-variables, the view's %rowIndex). */
const ENGINE_VARIABLES = new Set(['rowIndex', 'resource', 'rootResource', 'context', 'ucum', 'sct', 'loinc']);

/** The literal of each constant, by name; throws ViewError for a constant without exactly one value. */
export function constantLiterals(constants: unknown, where = 'constant'): Map<string, string> {
  const out = new Map<string, string>();
  if (constants === undefined) return out;
  if (!Array.isArray(constants)) throw new ViewError(`${where} must be an array`, where);
  constants.forEach((constant: unknown, i) => {
    const at = `${where}[${i}]`;
    if (!constant || typeof constant !== 'object') throw new ViewError(`${at} must be an object`, at);
    const entry = constant as Record<string, unknown>;
    if (typeof entry.name !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*$/.test(entry.name)) {
      throw new ViewError(`${at}.name must be a name of letters, digits and _`, `${at}.name`);
    }
    const values = Object.keys(entry).filter((key) => key.startsWith('value'));
    if (values.length !== 1) throw new ViewError(`${at} (${entry.name}) must have exactly one value[x]`, at);
    const key = values[0];
    const type = key.charAt(5).toLowerCase() + key.slice(6);
    const literal = LITERALS[type]?.(entry[key]);
    if (literal === undefined)
      throw new ViewError(`${at}.${key} is not a valid constant of type ${type}`, `${at}.${key}`);
    if (out.has(entry.name)) throw new ViewError(`${at}: constant ${entry.name} is defined twice`, `${at}.name`);
    out.set(entry.name, literal);
  });
  return out;
}

/** The expression with each `%constant` replaced by its literal (string literals and quoted names are left alone). */
export function substituteConstants(expression: string, literals: Map<string, string>, where: string): string {
  let out = '';
  let i = 0;
  while (i < expression.length) {
    const c = expression[i];
    if (c === "'" || c === '`') {
      let j = i + 1;
      while (j < expression.length && expression[j] !== c) j += expression[j] === '\\' ? 2 : 1;
      out += expression.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '%') {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expression.slice(i + 1))?.[0];
      if (name !== undefined) {
        const literal = literals.get(name);
        if (literal !== undefined) {
          out += `(${literal})`;
        } else if (ENGINE_VARIABLES.has(name)) {
          out += `%${name}`;
        } else {
          throw new ViewError(`${where}: %${name} is not a constant of this view`, where);
        }
        i += name.length + 1;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}
