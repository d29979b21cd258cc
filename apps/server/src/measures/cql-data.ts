// The patients' data as cql-execution reads it: cql-exec-fhir's FHIR 4.0.1 objects (FHIRObject,
// made by its FHIRWrapper), found faster than cql-exec-fhir's own Patient does. Its findRecords
// scans the whole record and builds a new object of every resource of the type for each Retrieve,
// then cql-execution keeps those whose code is in the Retrieve's value set, comparing each code
// with every code of the set: with Synthea's records (300-1,500 resources, CMS122 retrieving
// Encounters twenty times) that was about a second of CPU per patient. Here the resources are
// grouped by type once, a Retrieve with codes is first narrowed on the raw JSON to the resources
// holding one of its code strings (a superset of what cql-execution keeps, which still checks
// system and code), each resource's object is built once per patient, and value sets answer
// membership from an index. The results are the same: only work that could not match is skipped.
import type { Resource } from '@hearth/core';
import { ValueSet, type PatientObject, type RecordObject, type RetrieveDetails } from 'cql-execution';
import cqlFhir, { type FhirWrapper } from 'cql-exec-fhir';

type Json = Record<string, unknown>;

/** cql-exec-fhir's FHIR 4.0.1 model: read once per process (its model info is a large XML parse). */
let wrapper: FhirWrapper | undefined;

function fhirWrapper(): FhirWrapper {
  wrapper ??= cqlFhir.FHIRWrapper.FHIRv401();
  return wrapper;
}

/** A code as cql-execution's value set membership compares it: `code` and `system` by `===`. */
interface CodeLike {
  code?: unknown;
  system?: unknown;
}

/**
 * A value set whose membership test is a lookup instead of a scan of its codes. `hasMatch`
 * answers exactly as cql-execution's ValueSet (codesInList: same code and same system, both by
 * `===`; a lone string compared by code, which the base class handles with its ambiguity check).
 */
export class IndexedValueSet extends ValueSet {
  /** code → the systems it has in the set. */
  private readonly systems = new Map<unknown, unknown[]>();
  /** The code strings of the set (what the raw-JSON pre-filter and the search filter look for). */
  readonly codeStrings: Set<string>;

  constructor(oid: string, version: string | undefined, codes: ConstructorParameters<typeof ValueSet>[2]) {
    super(oid, version, codes);
    for (const c of this.codes as CodeLike[]) {
      const list = this.systems.get(c.code);
      if (list) list.push(c.system);
      else this.systems.set(c.code, [c.system]);
    }
    this.codeStrings = new Set([...this.systems.keys()].filter((c): c is string => typeof c === 'string'));
  }

  override hasMatch(code: unknown): boolean {
    const list = codeList(code);
    if (list.length === 1 && typeof list[0] === 'string') return super.hasMatch(code);
    return list.some((c) =>
      typeof c === 'string' ? this.systems.has(c) : (this.systems.get(c.code)?.includes(c.system) ?? false),
    );
  }
}

/** cql-execution's toCodeList: a list flattened, a concept's codes, or the value itself. */
function codeList(c: unknown): (string | CodeLike)[] {
  if (c === null || c === undefined) return [];
  if (Array.isArray(c)) return c.flatMap(codeList);
  const codes = (c as { codes?: unknown }).codes;
  if (Array.isArray(codes)) return codes as CodeLike[];
  return [c as string | CodeLike];
}

/** The code strings a Retrieve's codes can match, or undefined when they cannot be told (no narrowing then). */
function wantedCodes(
  codes: RetrieveDetails['codes'],
  memo: WeakMap<object, Set<string> | undefined>,
): Set<string> | undefined {
  if (!codes || typeof codes !== 'object') return undefined;
  if (memo.has(codes)) return memo.get(codes);
  let out: Set<string> | undefined;
  if (codes instanceof IndexedValueSet) out = codes.codeStrings;
  else {
    out = new Set<string>();
    for (const c of codeList(codes)) {
      const code = typeof c === 'string' ? c : c.code;
      if (typeof code !== 'string') {
        out = undefined;
        break;
      }
      out.add(code);
    }
  }
  memo.set(codes, out);
  return out;
}

/**
 * Whether a resource may have a code of `wanted` in its `property` (or a choice of it:
 * `medication` → `medicationCodeableConcept`). False only when it certainly has none: every value
 * found is a code, Coding or CodeableConcept whose codes are not wanted (cql-execution would not
 * keep it); anything else (a Reference, an unknown shape, a dotted path) keeps the resource.
 */
export function mayHaveCode(resource: Json, property: string, wanted: Set<string>): boolean {
  if (property.includes('.')) return true;
  const values: unknown[] = [];
  for (const key of Object.keys(resource)) {
    if (key === property || (key.startsWith(property) && /^[A-Z]/.test(key.slice(property.length)))) {
      values.push(resource[key]);
    }
  }
  const holds = (v: unknown): boolean | undefined => {
    if (typeof v === 'string') return wanted.has(v);
    if (Array.isArray(v)) {
      let unknown = false;
      for (const x of v) {
        const h = holds(x);
        if (h === true) return true;
        if (h === undefined) unknown = true;
      }
      return unknown ? undefined : false;
    }
    if (!v || typeof v !== 'object') return undefined;
    const o = v as Json;
    if (Array.isArray(o.coding)) return holds(o.coding.map((c) => (c as Json | null)?.code ?? null));
    if (typeof o.code === 'string') return wanted.has(o.code);
    if ('code' in o || 'system' in o) return false; // a Coding without a code string matches nothing
    return undefined;
  };
  for (const v of values) {
    if (v === null) continue;
    if (holds(v) !== false) return true;
  }
  return false;
}

/** One patient's record as cql-execution's PatientObject: the Patient, with findRecords over the rest. */
export function patientObject(record: Resource[]): PatientObject {
  const fhir = fhirWrapper();
  const byType = new Map<string, Json[]>();
  for (const r of record) {
    const list = byType.get(r.resourceType);
    if (list) list.push(r as unknown as Json);
    else byType.set(r.resourceType, [r as unknown as Json]);
  }
  const objects = new Map<Json, RecordObject>();
  const wrapped = (json: Json): RecordObject => {
    let o = objects.get(json);
    if (!o) {
      o = fhir.wrap(json);
      objects.set(json, o);
    }
    return o;
  };
  const codesMemo = new WeakMap<object, Set<string> | undefined>();
  const patient = fhir.wrap(record[0]) as PatientObject;
  patient.findRecords = (profile: string | null, details?: RetrieveDetails): RecordObject[] => {
    // As cql-exec-fhir: the class of the Retrieve's data type (or profile), its resources by resourceType.
    const classInfo = fhir._modelInfo.findClass(details ? details.datatype : (profile ?? ''));
    if (!classInfo) return [];
    let resources = byType.get(classInfo.name.replace(/^FHIR\./, '')) ?? [];
    const wanted = details?.codeProperty ? wantedCodes(details.codes, codesMemo) : undefined;
    if (wanted && details?.codeProperty) {
      const property = details.codeProperty;
      resources = resources.filter((r) => mayHaveCode(r, property, wanted));
    }
    return resources.map(wrapped);
  };
  return patient;
}
