/**
 * Expands the value sets of required bindings into enumerated 'system|code' lists
 * (hl7.org/fhir/R4/valueset.html#compositions). Only compositions that can be enumerated from
 * the definitions at hand are expanded: explicit concept lists, whole CodeSystems with complete
 * content, and other value sets built that way. Filters, exclusions and external code systems
 * (UCUM, BCP-13, ISO 4217) make a value set non-enumerable; such bindings are not checked.
 */
import type { TypeSchema } from './types.js';

interface Concept {
  code: string;
  concept?: Concept[];
}

interface CodeSystemJson {
  resourceType: 'CodeSystem';
  url: string;
  content?: string;
  concept?: Concept[];
}

interface ValueSetInclude {
  system?: string;
  concept?: { code: string }[];
  filter?: unknown[];
  valueSet?: string[];
}

interface ValueSetJson {
  resourceType: 'ValueSet';
  url: string;
  compose?: { include?: ValueSetInclude[]; exclude?: unknown[] };
}

export interface TerminologyBundle {
  entry?: { resource?: Record<string, unknown> }[];
}

/** Types whose elements can carry a required binding that the validator checks. */
const CODED_TYPES = new Set(['code', 'Coding', 'CodeableConcept', 'string', 'uri']);

export const RESOURCE_TYPES_SYSTEM = 'http://hl7.org/fhir/resource-types';

function stripVersion(url: string): string {
  const bar = url.indexOf('|');
  return bar < 0 ? url : url.slice(0, bar);
}

export class ValueSetExpander {
  private readonly codeSystems = new Map<string, CodeSystemJson>();
  private readonly valueSets = new Map<string, ValueSetJson>();
  private readonly extraCodes = new Map<string, string[]>();

  /** Later bundles do not replace definitions already added. */
  add(bundle: TerminologyBundle): void {
    for (const entry of bundle.entry ?? []) {
      const r = entry.resource;
      if (r?.resourceType === 'CodeSystem' && !this.codeSystems.has(r.url as string)) {
        this.codeSystems.set(r.url as string, r as unknown as CodeSystemJson);
      } else if (r?.resourceType === 'ValueSet' && !this.valueSets.has(r.url as string)) {
        this.valueSets.set(r.url as string, r as unknown as ValueSetJson);
      }
    }
  }

  /** Adds codes to a code system (used to list the platform's resource types among R4's). */
  addCodes(system: string, codes: string[]): void {
    this.extraCodes.set(system, [...(this.extraCodes.get(system) ?? []), ...codes]);
  }

  /** The 'system|code' members of a value set, or undefined when it cannot be enumerated. */
  expand(url: string, seen: Set<string> = new Set()): string[] | undefined {
    url = stripVersion(url);
    const vs = this.valueSets.get(url);
    if (!vs?.compose || vs.compose.exclude?.length || seen.has(url)) {
      return undefined;
    }
    seen.add(url);
    const out = new Set<string>();
    for (const include of vs.compose.include ?? []) {
      if (include.filter?.length) {
        return undefined;
      }
      let members: string[] | undefined;
      if (include.system && include.concept) {
        members = include.concept.map((c) => `${include.system}|${c.code}`);
      } else if (include.system) {
        members = this.codeSystemCodes(include.system);
      }
      if (include.valueSet) {
        // Codes must be in every listed value set (and in the system, if one is given).
        for (const other of include.valueSet) {
          const nested = this.expand(other, seen);
          if (!nested) {
            return undefined;
          }
          members = members ? members.filter((m) => nested.includes(m)) : nested;
        }
      }
      if (!members) {
        return undefined;
      }
      members.forEach((m) => out.add(m));
    }
    return out.size > 0 ? [...out] : undefined;
  }

  private codeSystemCodes(system: string): string[] | undefined {
    const cs = this.codeSystems.get(system);
    if (!cs || cs.content !== 'complete') {
      return undefined;
    }
    const out: string[] = [];
    const walk = (concepts: Concept[] | undefined): void => {
      for (const c of concepts ?? []) {
        out.push(`${system}|${c.code}`);
        walk(c.concept);
      }
    };
    walk(cs.concept);
    for (const code of this.extraCodes.get(system) ?? []) {
      out.push(`${system}|${code}`);
    }
    return out;
  }
}

/** Expansions of every value set that a required binding of a coded element names. */
export function expandRequiredBindings(
  types: Record<string, TypeSchema>,
  expander: ValueSetExpander,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const tried = new Set<string>();
  for (const type of Object.values(types)) {
    for (const el of Object.values(type.elements)) {
      const url = el.binding?.strength === 'required' ? el.binding.valueSet : undefined;
      if (!url || tried.has(url) || !el.type.some((t) => CODED_TYPES.has(t.code))) {
        continue;
      }
      tried.add(url);
      const codes = expander.expand(url);
      if (codes) {
        out[url] = codes;
      }
    }
  }
  return out;
}
