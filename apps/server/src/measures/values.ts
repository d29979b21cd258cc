// What a criteria expression answered for one subject, in a form free of either engine (CQL or
// FHIRPath): population membership (the subject, or the resources of a non-boolean population
// basis) and the value as categories (CodeableConcepts) for stratifiers and supplemental data.

type Json = Record<string, unknown>;

export interface CodeableConcept {
  coding?: { system?: string; code?: string; display?: string }[];
  text?: string;
}

export interface Evaluated {
  /** true/false for a boolean basis; the members' keys (`Encounter/1`) for a resource basis. */
  members: boolean | string[];
  /** The value as categories: one per list item, none for null. */
  categories: CodeableConcept[];
  /** Numbers the value holds (a measure observation), in order. */
  numbers: number[];
}

/** The JSON of a value: cql-exec-fhir's FHIRObject keeps it in `_json`; FHIRPath answers plain JSON. */
function jsonOf(value: unknown): Json | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const wrapped = (value as { _json?: unknown })._json;
  if (wrapped && typeof wrapped === 'object') return wrapped as Json;
  return undefined;
}

function isCqlCode(v: Json): boolean {
  return typeof v.code === 'string' && ('system' in v || 'display' in v) && !('resourceType' in v);
}

/** One value as a category: a code, a concept, a resource, a tuple with a code, or its text. */
export function categoryOf(value: unknown): CodeableConcept | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return { text: String(value) };
  }
  const json = jsonOf(value) ?? (value as Json);
  if (Array.isArray(json.codes)) {
    // A CQL Concept.
    const coding = (json.codes as Json[]).map(codingOf);
    return json.display ? { coding, text: String(json.display) } : { coding };
  }
  if (Array.isArray(json.coding)) {
    const coding = (json.coding as Json[]).map(codingOf);
    return json.text ? { coding, text: String(json.text) } : { coding };
  }
  if (isCqlCode(json)) return { coding: [codingOf(json)] };
  if (typeof json.resourceType === 'string') return { text: `${json.resourceType}/${String(json.id)}` };
  // A CQL Tuple (SDE Payer's { code, period }): its code when it has one.
  if ('code' in json && json.code && typeof json.code === 'object') return categoryOf(json.code);
  const text = typeof (value as { toString?: unknown }).toString === 'function' ? String(value) : '';
  return { text: text && text !== '[object Object]' ? text : JSON.stringify(json) };
}

function codingOf(c: Json): { system?: string; code?: string; display?: string } {
  const field = (v: unknown): string | undefined => {
    if (v === null || v === undefined) return undefined;
    if (typeof v === 'object' && 'value' in (v as Json)) return (v as Json).value as string | undefined;
    return String(v);
  };
  const out: { system?: string; code?: string; display?: string } = {};
  const system = field(c.system);
  const code = field(c.code);
  const display = field(c.display);
  if (system) out.system = system;
  if (code) out.code = code;
  if (display) out.display = display;
  return out;
}

/** The key of a resource member (`Type/id`), or of any other list item (its JSON). */
function memberKey(item: unknown): string {
  const json = jsonOf(item) ?? (item && typeof item === 'object' ? (item as Json) : undefined);
  if (json && typeof json.resourceType === 'string' && json.id !== undefined)
    return `${json.resourceType}/${String(json.id)}`;
  return JSON.stringify(json ?? item);
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const json = value && typeof value === 'object' ? (jsonOf(value) ?? (value as Json)) : undefined;
  if (json && typeof json.value === 'number') return json.value; // a Quantity
  return undefined;
}

/** Normalises one expression's answer; `basis` boolean takes a non-list value's truth. */
export function evaluated(value: unknown, boolean: boolean): Evaluated {
  const list = Array.isArray(value) ? (value as unknown[]) : value === null || value === undefined ? [] : [value];
  const categories = list.map(categoryOf).filter((c): c is CodeableConcept => c !== undefined);
  const numbers = list.map(numberOf).filter((n): n is number => n !== undefined);
  let members: boolean | string[];
  if (boolean) {
    members = Array.isArray(value) ? list.length > 0 : value === true;
  } else {
    members = list.map(memberKey);
  }
  return { members, categories, numbers };
}

/** A category's grouping key: its codes (system|code), or its text. */
export function categoryKey(c: CodeableConcept): string {
  if (c.coding?.length) return c.coding.map((x) => `${x.system ?? ''}|${x.code ?? ''}`).join(',');
  return `text:${c.text ?? ''}`;
}
