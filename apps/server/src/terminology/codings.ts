import { createIssue, type OperationOutcomeIssue, type Resource } from '@hearth/core';
import { choiceName, getSchema, type FhirSchema } from '@hearth/definitions';
import type { Queryable } from '../platform/postgres.js';
import type { TerminologyScope } from './resolve.js';

/** One Coding of a resource (also each coding of a CodeableConcept), with its FHIRPath. */
export interface FoundCoding {
  system: string;
  code?: string;
  display?: string;
  version?: string;
  expression: string;
}

/** Codings below this many are checked; a larger resource's rest is not (one statement per check). */
const MAX_CODINGS = 5000;
const MAX_DEPTH = 32;

/**
 * Every Coding in a resource, by its type definitions: CodeableConcept.coding, Coding-typed
 * elements, extensions' valueCoding, inside contained resources and Bundle entries. Only codings
 * with a system are returned (a code without its system names nothing checkable).
 */
export function collectCodings(resource: Resource, schema: FhirSchema = getSchema()): FoundCoding[] {
  const out: FoundCoding[] = [];
  const visit = (value: unknown, typeName: string, expression: string, depth: number): void => {
    if (value === null || value === undefined || out.length >= MAX_CODINGS || depth > MAX_DEPTH) {
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, typeName, `${expression}[${i}]`, depth));
      return;
    }
    if (typeof value !== 'object') {
      return;
    }
    const record = value as Record<string, unknown>;
    let type = typeName;
    if (type === 'Resource' || type === 'DomainResource') {
      type = typeof record.resourceType === 'string' ? record.resourceType : '';
    }
    if (type === 'Coding') {
      if (typeof record.system === 'string' && record.system !== '') {
        out.push({
          system: record.system,
          code: typeof record.code === 'string' ? record.code : undefined,
          display: typeof record.display === 'string' ? record.display : undefined,
          version: typeof record.version === 'string' ? record.version : undefined,
          expression,
        });
      }
      return;
    }
    const schemaType = Object.hasOwn(schema.types, type) ? schema.types[type] : undefined;
    if (!schemaType || schemaType.kind === 'primitive-type') {
      return;
    }
    for (const [name, element] of Object.entries(schemaType.elements)) {
      if (name.endsWith('[x]')) {
        for (const t of element.type) {
          const key = choiceName(name, t.code);
          if (Object.hasOwn(record, key)) {
            visit(record[key], t.code, `${expression}.${key}`, depth + 1);
          }
        }
      } else if (Object.hasOwn(record, name) && element.type[0]) {
        visit(record[name], element.type[0].code, `${expression}.${name}`, depth + 1);
      }
    }
  };
  if (typeof resource?.resourceType === 'string') {
    visit(resource, resource.resourceType, resource.resourceType, 0);
  }
  return out;
}

interface SystemRow {
  id: string;
  url: string;
  version: string | null;
  content: string | null;
  case_sensitive: boolean;
}

interface ConceptRow {
  code_system_id: string;
  code: string;
  display: string | null;
  designations: { value?: unknown }[] | null;
}

/** Displays are compared as the reference validator does by default: case and spacing aside. */
// Zero-width characters are invisible, so not a different display (the R4 example ServiceRequest-ft4 has
// one inside "Mass/volume").
const normalise = (text: string) =>
  text
    .replace(/[\u200B-\u200D\u2060\uFEFF]/g, '')
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase();

/**
 * Checks each coding whose system is a code system the caller sees (its projects' or the server's):
 * a system held with all its concepts (content `complete`) must have the code, and a display, when
 * given, must be the concept's display or one of its designations (hl7.org/fhir/R4/datatypes.html#Coding:
 * "the display SHALL be ... as defined by the system"). Systems Hearth does not hold (LOINC or
 * SNOMED CT unless imported) and codes of fragments, examples or supplements are not judged.
 * Errors, as the reference FHIR validator reports both.
 */
export async function checkCodings(
  db: Queryable,
  resource: Resource,
  scope: TerminologyScope,
  schema: FhirSchema = getSchema(),
): Promise<OperationOutcomeIssue[]> {
  const codings = collectCodings(resource, schema);
  if (codings.length === 0) {
    return [];
  }
  const systems = [...new Set(codings.map((c) => c.system))];
  const params: unknown[] = [systems];
  let visible = '';
  if (scope.projects) {
    params.push(scope.projects);
    visible = 'AND (global OR project_id = ANY($2::uuid[]))';
  }
  const found = await db.query<SystemRow>(
    `SELECT id::text, url, version, content, case_sensitive FROM terminology_code_system
     WHERE url = ANY($1::text[]) ${visible}`,
    params,
  );
  if (found.rows.length === 0) {
    return [];
  }
  const bySystem = new Map<string, SystemRow[]>();
  for (const row of found.rows) {
    bySystem.set(row.url, [...(bySystem.get(row.url) ?? []), row]);
  }
  const codes = [...new Set(codings.filter((c) => bySystem.has(c.system) && c.code).map((c) => c.code!))];
  const concepts = codes.length
    ? await db.query<ConceptRow>(
        `SELECT code_system_id::text, code, display, designations FROM terminology_concept
         WHERE code_system_id = ANY($1::bigint[]) AND (code = ANY($2::text[]) OR lower(code) = ANY($3::text[]))`,
        [found.rows.map((r) => r.id), codes, codes.map((c) => c.toLowerCase())],
      )
    : { rows: [] as ConceptRow[] };
  const conceptsBySystem = new Map<string, ConceptRow[]>();
  for (const row of concepts.rows) {
    conceptsBySystem.set(row.code_system_id, [...(conceptsBySystem.get(row.code_system_id) ?? []), row]);
  }

  const issues: OperationOutcomeIssue[] = [];
  for (const coding of codings) {
    const all = bySystem.get(coding.system);
    if (!all || coding.code === undefined) {
      continue;
    }
    // The version the coding names, when Hearth holds it; otherwise any version held.
    const named = coding.version ? all.filter((r) => r.version === coding.version) : [];
    const rows = named.length > 0 ? named : all;
    const matches = rows.flatMap((row) =>
      (conceptsBySystem.get(row.id) ?? []).filter((c) =>
        row.case_sensitive ? c.code === coding.code : c.code.toLowerCase() === coding.code!.toLowerCase(),
      ),
    );
    const label = `${coding.system}#${coding.code}`;
    if (matches.length === 0) {
      if (rows.some((r) => r.content === 'complete')) {
        issues.push(
          createIssue(
            'code-invalid',
            `Unknown code "${coding.code}" in the code system ${coding.system}`,
            `${coding.expression}.code`,
          ),
        );
      }
      continue;
    }
    if (coding.display === undefined) {
      continue;
    }
    const valid = new Set<string>();
    for (const concept of matches) {
      if (concept.display) valid.add(concept.display);
      for (const d of concept.designations ?? []) {
        if (typeof d?.value === 'string') valid.add(d.value);
      }
    }
    if (valid.size === 0) {
      continue;
    }
    const given = normalise(coding.display);
    if (![...valid].some((v) => normalise(v) === given)) {
      const choices = [...valid].slice(0, 5).map((v) => `"${v}"`);
      issues.push(
        createIssue(
          'invalid',
          `Wrong display "${coding.display}" for ${label}: the code system's is ${choices.join(' or ')}`,
          `${coding.expression}.display`,
        ),
      );
    }
  }
  return issues;
}
