import type { CodeSystem, CodeSystemConcept, CodeSystemConceptProperty } from '@hearth/core';

/** One concept as stored in terminology_concept, with its direct parents. */
export interface ConceptRow {
  code: string;
  display?: string;
  definition?: string;
  /** notSelectable = true (hl7.org/fhir/R4/codesystem-concept-properties.html). */
  abstract: boolean;
  /** inactive = true, or status retired/inactive. */
  inactive: boolean;
  designations?: unknown[];
  properties?: CodeSystemConceptProperty[];
  /** Property values as text, by property code, for the `=`, `in`, `regex` and `exists` filters. */
  propertyValues: Record<string, string[]>;
  parents: string[];
}

const PARENT_URI = 'http://hl7.org/fhir/concept-properties#parent';
const CHILD_URI = 'http://hl7.org/fhir/concept-properties#child';

/** Property codes that mean "my parent" / "my child" in this code system (by code or standard URI). */
export function hierarchyPropertyCodes(cs: Pick<CodeSystem, 'property'>): { parent: Set<string>; child: Set<string> } {
  const parent = new Set(['parent', 'subsumedBy']);
  const child = new Set(['child']);
  for (const p of cs.property ?? []) {
    if (p.uri === PARENT_URI) {
      parent.add(p.code);
    } else if (p.uri === CHILD_URI) {
      child.add(p.code);
    }
  }
  return { parent, child };
}

/** The text of a concept property value, whatever its type. */
export function propertyValueText(p: CodeSystemConceptProperty): string | undefined {
  if (p.valueCode !== undefined) return p.valueCode;
  if (p.valueString !== undefined) return p.valueString;
  if (p.valueBoolean !== undefined) return String(p.valueBoolean);
  if (p.valueInteger !== undefined) return String(p.valueInteger);
  if (p.valueDecimal !== undefined) return String(p.valueDecimal);
  if (p.valueDateTime !== undefined) return p.valueDateTime;
  if (p.valueCoding !== undefined) return p.valueCoding.code;
  return undefined;
}

function isTrue(values: string[] | undefined): boolean {
  return values?.includes('true') ?? false;
}

/**
 * Flattens a CodeSystem's concept tree into rows. Hierarchy comes from nesting and from the
 * parent/child properties (R4 codesystem.html#hierarchy: both are allowed, and v3 code systems use
 * `child` for polyhierarchy). A code listed twice is merged: first display wins, parents add up.
 */
export function flattenConcepts(cs: Pick<CodeSystem, 'concept' | 'property'>): ConceptRow[] {
  const { parent: parentProps, child: childProps } = hierarchyPropertyCodes(cs);
  const byCode = new Map<string, ConceptRow>();
  const extraParents: [child: string, parent: string][] = [];

  const visit = (concepts: CodeSystemConcept[] | undefined, parentCode: string | undefined, depth: number): void => {
    if (depth > 200) {
      return; // deeper than any real hierarchy; the JSON depth limit stops requests long before this
    }
    for (const c of concepts ?? []) {
      if (typeof c?.code !== 'string' || c.code === '') {
        continue;
      }
      let row = byCode.get(c.code);
      if (!row) {
        row = toRow(c, parentProps, childProps, extraParents);
        byCode.set(c.code, row);
      }
      if (parentCode !== undefined && !row.parents.includes(parentCode)) {
        row.parents.push(parentCode);
      }
      visit(c.concept, c.code, depth + 1);
    }
  };
  visit(cs.concept, undefined, 0);

  for (const [child, parent] of extraParents) {
    const row = byCode.get(child);
    if (row && child !== parent && !row.parents.includes(parent)) {
      row.parents.push(parent);
    }
  }
  return [...byCode.values()];
}

function toRow(
  c: CodeSystemConcept,
  parentProps: Set<string>,
  childProps: Set<string>,
  extraParents: [string, string][],
): ConceptRow {
  const propertyValues: Record<string, string[]> = {};
  const parents: string[] = [];
  for (const p of c.property ?? []) {
    const text = propertyValueText(p);
    if (text === undefined || typeof p.code !== 'string') {
      continue;
    }
    (propertyValues[p.code] ??= []).push(text);
    if (parentProps.has(p.code) && text !== c.code && !parents.includes(text)) {
      parents.push(text);
    } else if (childProps.has(p.code)) {
      extraParents.push([text, c.code]);
    }
  }
  const status = propertyValues.status ?? [];
  return {
    code: c.code,
    display: c.display,
    definition: c.definition,
    abstract: isTrue(propertyValues.notSelectable) || isTrue(propertyValues.abstract),
    inactive: isTrue(propertyValues.inactive) || status.includes('retired') || status.includes('inactive'),
    designations: c.designation?.length ? c.designation : undefined,
    properties: c.property?.length ? c.property : undefined,
    propertyValues,
    parents,
  };
}
