// A measure's data requirements, read from its ELM: the FHIR resource types its Retrieves read and,
// per type, the codes that can match when every Retrieve of the type filters by a value set or by
// codes (`[Observation: "HbA1c Laboratory Test"]`). Records are then read with those codes as a
// search filter, so that a patient's hundreds of other Observations are never read. The filter is a
// superset of what the engine keeps (codes in any system, where cql-execution also checks the
// system), so it changes no result; a Retrieve whose codes cannot be told before the run (an
// expression), or one without codes, means every resource of that type.
import type { Elm } from './library.js';

type Json = Record<string, unknown>;

/** Per resource type: the code strings that can match on `property`, or undefined for every resource. */
export interface TypeRequirement {
  /** The element the Retrieves filter on (`code`, `type`, `medication`); one for all of them. */
  property?: string;
  /** Code strings; value sets are named by url and resolved by the caller (their expansions). */
  codes?: Set<string>;
  valueSets?: Set<string>;
  /** True when some Retrieve of the type reads every resource of it. */
  all: boolean;
}

const FHIR_TYPE = /^\{http:\/\/hl7\.org\/fhir\}([A-Za-z]+)$/;

/** The value set url and codes a Retrieve's `codes` name, or undefined when they are not plain references. */
function staticCodes(
  node: unknown,
  lib: Elm,
  byName: (libraryName: string | undefined, lib: Elm) => Elm | undefined,
): { valueSets: string[]; codes: string[] } | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const o = node as Json;
  const owner = byName(o.libraryName as string | undefined, lib);
  switch (o.type) {
    case 'ValueSetRef': {
      const def = owner?.library.valueSets?.def?.find((d) => d.name === o.name);
      return def ? { valueSets: [def.id], codes: [] } : undefined;
    }
    case 'CodeRef': {
      const def = (owner?.library.codes as { def?: { name: string; id: string }[] } | undefined)?.def?.find(
        (d) => d.name === o.name,
      );
      return def ? { valueSets: [], codes: [def.id] } : undefined;
    }
    case 'ToList':
      return staticCodes(o.operand, lib, byName);
    case 'List': {
      const out = { valueSets: [] as string[], codes: [] as string[] };
      for (const e of (o.element as unknown[] | undefined) ?? []) {
        const part = staticCodes(e, lib, byName);
        if (!part) return undefined;
        out.valueSets.push(...part.valueSets);
        out.codes.push(...part.codes);
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** The data requirements of the libraries' Retrieves, by resource type. */
export function dataRequirements(libraries: Elm[]): Map<string, TypeRequirement> {
  const out = new Map<string, TypeRequirement>();
  const byName = (libraryName: string | undefined, lib: Elm): Elm | undefined => {
    if (!libraryName) return lib;
    const include = lib.library.includes?.def?.find((d) => d.localIdentifier === libraryName);
    if (!include) return undefined;
    const name = include.path.slice(include.path.lastIndexOf('/') + 1);
    return libraries.find(
      (l) => l.library.identifier.id === name && (!include.version || l.library.identifier.version === include.version),
    );
  };
  const retrieve = (o: Json, lib: Elm): void => {
    const m = typeof o.dataType === 'string' ? FHIR_TYPE.exec(o.dataType) : null;
    if (!m) return;
    const req = out.get(m[1]) ?? { all: false };
    out.set(m[1], req);
    if (req.all) return;
    const codes = o.codes ? staticCodes(o.codes, lib, byName) : undefined;
    const property = typeof o.codeProperty === 'string' ? o.codeProperty : undefined;
    if (!codes || !property || (req.property !== undefined && req.property !== property)) {
      out.set(m[1], { all: true });
      return;
    }
    req.property = property;
    req.codes ??= new Set();
    req.valueSets ??= new Set();
    codes.codes.forEach((c) => req.codes?.add(c));
    codes.valueSets.forEach((v) => req.valueSets?.add(v));
  };
  for (const lib of libraries) {
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const n of node) walk(n);
        return;
      }
      if (!node || typeof node !== 'object') return;
      const o = node as Json;
      if (o.type === 'Retrieve') retrieve(o, lib);
      for (const [k, v] of Object.entries(o)) if (k !== 'annotation' && typeof v === 'object') walk(v);
    };
    walk(lib.library.statements);
  }
  return out;
}
