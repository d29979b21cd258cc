import type { Readable } from 'node:stream';
import {
  badRequest,
  fail,
  findUnstorable,
  unstorableCharacter,
  type CodeSystemConceptProperty,
  type Coding,
  type ParametersParameter,
} from '@hearth/core';
import { readDelimited, readLines } from './delimited.js';
import type { ImportConcept } from './importer.js';

/**
 * NDJSON, one concept per line (application/x-ndjson, application/fhir+ndjson):
 * {"code": "…", "display": "…", "definition": "…", "parent": "…" | ["…"],
 *  "property": [{"code": "…", "valueString": "…"}], "designation": [...]}
 * A CodeSystem.concept in JSON is a valid line (nested `concept` children are read too).
 */
export async function* ndjsonConcepts(body: Readable): AsyncGenerator<ImportConcept> {
  for await (const { line, number } of readLines(body)) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      fail(badRequest(`Line ${number} is not JSON`, `line ${number}`));
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      fail(badRequest(`Line ${number} must be a JSON object`, `line ${number}`));
    }
    // A streamed body passes no request-level check: its lines are decoded only here (a raw NUL
    // is not JSON; UTF-8 has no surrogates: only escapes can produce either).
    const unstorable = line.includes('\\u') ? findUnstorable(value) : undefined;
    if (unstorable) {
      const where = unstorable.path ? ` at ${unstorable.path}` : '';
      fail(badRequest(`Line ${number}${where} contains ${unstorable.what}, which is not allowed`, `line ${number}`));
    }
    yield* fromJsonConcept(value as Record<string, unknown>, number, undefined, 0);
  }
}

function* fromJsonConcept(
  c: Record<string, unknown>,
  line: number,
  parent: string | undefined,
  depth: number,
): Generator<ImportConcept> {
  if (typeof c.code !== 'string' || c.code === '') {
    fail(badRequest(`Line ${line} has no code`, `line ${line}`));
  }
  const parents = (Array.isArray(c.parent) ? c.parent : c.parent === undefined ? [] : [c.parent]).filter(
    (p): p is string => typeof p === 'string',
  );
  if (parent) {
    parents.push(parent);
  }
  yield {
    code: c.code,
    display: typeof c.display === 'string' ? c.display : undefined,
    definition: typeof c.definition === 'string' ? c.definition : undefined,
    parents,
    properties: Array.isArray(c.property) ? (c.property as CodeSystemConceptProperty[]) : undefined,
    designations: Array.isArray(c.designation) ? c.designation : undefined,
  };
  if (Array.isArray(c.concept) && depth < 100) {
    for (const child of c.concept) {
      if (typeof child === 'object' && child !== null) {
        yield* fromJsonConcept(child as Record<string, unknown>, line, c.code, depth + 1);
      }
    }
  }
}

export interface DelimitedOptions {
  delimiter: string;
  quoted: boolean;
  codeColumn: string;
  displayColumn: string;
  definitionColumn: string;
  parentColumn: string;
  /** Rows are kept only when every column=value holds (e.g. SNOMED RF2 active=1, typeId=116680003). */
  where: { column: string; value: string }[];
  /** Columns kept as string properties; undefined: every column not used otherwise. */
  propertyColumns?: string[];
}

/**
 * CSV or TSV with a header row (e.g. LOINC's Loinc.csv, SNOMED CT RF2 files). Column names choose
 * the code, display, definition and parent columns; a parent cell may list several codes with `|`.
 * Other columns become string properties, usable in `=`/`regex` filters (e.g. LOINC SCALE_TYP).
 */
export async function* delimitedConcepts(
  body: Readable,
  options: DelimitedOptions,
  onSkip: () => void,
): AsyncGenerator<ImportConcept> {
  let header: string[] | undefined;
  let index: Record<string, number> = {};
  let propertyIndexes: [string, number][] = [];
  let row = 0;
  for await (const record of readDelimited(body, options.delimiter, options.quoted)) {
    row++;
    // A streamed body passes no request-level check: its rows are decoded only here.
    for (const field of record) {
      const bad = unstorableCharacter(field);
      if (bad) {
        fail(badRequest(`Row ${row} contains ${bad}, which is not allowed`, `row ${row}`));
      }
    }
    if (!header) {
      header = record.map((h) => h.trim().replace(/^\uFEFF/, ''));
      index = Object.fromEntries(header.map((h, i) => [h, i]));
      if (index[options.codeColumn] === undefined) {
        fail(badRequest(`The header has no "${options.codeColumn}" column (codeColumn)`, 'codeColumn'));
      }
      for (const w of options.where) {
        if (index[w.column] === undefined) {
          fail(badRequest(`The header has no "${w.column}" column (where)`, 'where'));
        }
      }
      const used = new Set([options.codeColumn, options.displayColumn, options.definitionColumn, options.parentColumn]);
      propertyIndexes = (options.propertyColumns ?? header.filter((h) => !used.has(h)))
        .filter((h) => index[h] !== undefined)
        .map((h) => [h, index[h]]);
      continue;
    }
    if (options.where.some((w) => record[index[w.column]] !== w.value)) {
      onSkip();
      continue;
    }
    const cell = (column: string): string | undefined => {
      const i = index[column];
      const v = i === undefined ? undefined : record[i];
      return v === undefined || v === '' ? undefined : v;
    };
    const parentCell = cell(options.parentColumn);
    yield {
      code: cell(options.codeColumn) ?? '',
      display: cell(options.displayColumn),
      definition: cell(options.definitionColumn),
      parents: parentCell ? parentCell.split('|').filter(Boolean) : [],
      properties: propertyIndexes
        .filter(([, i]) => record[i] !== undefined && record[i] !== '')
        .map(([code, i]) => ({ code, valueString: record[i] })),
    };
  }
}

/**
 * The Parameters form (one request per chunk): `concept` codings and `property` parts
 * {code, property, value[x]}, where property `parent` (or the system's parent property) links the
 * hierarchy.
 */
export function* parametersConcepts(parameter: ParametersParameter[]): Generator<ImportConcept> {
  const byCode = new Map<string, ImportConcept>();
  for (const p of parameter) {
    if (p.name === 'concept') {
      const coding = p.valueCoding as Coding | undefined;
      if (!coding?.code) {
        fail(badRequest('Each concept parameter needs a valueCoding with a code', 'concept'));
      }
      const existing = byCode.get(coding.code);
      if (existing) {
        existing.display ??= coding.display;
      } else {
        byCode.set(coding.code, { code: coding.code, display: coding.display, properties: [] });
      }
    } else if (p.name === 'property') {
      const code = p.part?.find((x) => x.name === 'code')?.valueCode;
      const property = p.part?.find((x) => x.name === 'property')?.valueCode;
      const value = p.part?.find((x) => x.name === 'value');
      if (!code || !property || !value) {
        fail(badRequest('Each property parameter needs code, property and value parts', 'property'));
      }
      const { name: _name, ...valueX } = value;
      const concept = byCode.get(code) ?? { code, properties: [] };
      byCode.set(code, concept);
      concept.properties?.push({ code: property, ...valueX } as CodeSystemConceptProperty);
    }
  }
  yield* byCode.values();
}
