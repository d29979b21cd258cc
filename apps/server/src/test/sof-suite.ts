// Test helper: the SQL on FHIR v2 conformance suite (../shared/data/sql-on-fhir-v2-tests, the
// specification's tests/*.json: resources, then tests with a view and the expected rows or an
// expected error). Parsed keeping decimal precision, as the spec's boundary tests need.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { parseKeepingDecimals, stringifyKeepingDecimals } from '../storage/decimal-json.js';

export const SOF_SUITE_DIR = resolve(import.meta.dirname, '../../../../../shared/data/sql-on-fhir-v2-tests');

export interface SofCase {
  file: string;
  title: string;
  resources: Record<string, unknown>[];
  view: Record<string, unknown>;
  expect?: Record<string, unknown>[];
  expectError?: boolean;
  expectColumns?: string[];
}

/** Every case of the suite (none when the data is absent). */
export function loadSofCases(dir = SOF_SUITE_DIR): SofCase[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((file) => {
      const suite = parseKeepingDecimals(readFileSync(join(dir, file), 'utf8')) as {
        resources: Record<string, unknown>[];
        tests: Omit<SofCase, 'file' | 'resources'>[];
      };
      return suite.tests.map((t) => ({ ...t, file, resources: suite.resources }));
    });
}

/** Rows as a sorted list of canonical JSON strings: the suite's expected rows are a multiset. */
export function canonicalRows(rows: Record<string, unknown>[]): string[] {
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
        )
      : value;
  return rows.map((row) => JSON.stringify(canonical(row))).sort();
}

/** A resource of the suite as JSON text, its decimals as the suite writes them (1.0 stays 1.0). */
export function resourceText(resource: Record<string, unknown>): string {
  return stringifyKeepingDecimals(resource);
}

/**
 * The Parameters of ViewDefinition/$run for a case, as JSON text (a body built with JSON.stringify
 * would send 1.0 as 1): the view, and the case's resources inline unless the run reads stored ones.
 */
export function runParametersText(c: SofCase, inline: boolean): string {
  const parameters = [
    `{"name":"viewResource","resource":${resourceText({ resourceType: 'ViewDefinition', ...c.view })}}`,
    ...(inline ? c.resources.map((r) => `{"name":"resource","resource":${resourceText(r)}}`) : []),
  ];
  return `{"resourceType":"Parameters","parameter":[${parameters.join(',')}]}`;
}

/** Whether rows answer a case: its expected rows as a multiset, and its columns in order where it names them. */
export function matchesCase(c: SofCase, rows: Record<string, unknown>[]): boolean {
  if (JSON.stringify(canonicalRows(rows)) !== JSON.stringify(canonicalRows(c.expect ?? []))) return false;
  return !c.expectColumns || rows.length === 0 || Object.keys(rows[0]).join() === c.expectColumns.join();
}

/** The suite's cases by file, in file order (a file's cases share its resources). */
export function casesByFile(cases: SofCase[]): SofCase[][] {
  const files = new Map<string, SofCase[]>();
  for (const c of cases) files.set(c.file, [...(files.get(c.file) ?? []), c]);
  return [...files.values()];
}

/**
 * Stores a file's resources in the project `headers` act for (PUT with the suite's id, POST without
 * one), as text so that their decimals are stored as written; answers their URLs, to delete them.
 */
export async function storeSofResources(
  app: FastifyInstance,
  headers: Record<string, string>,
  resources: Record<string, unknown>[],
): Promise<string[]> {
  const urls: string[] = [];
  for (const r of resources) {
    const type = String(r.resourceType);
    const res = await app.inject({
      method: r.id === undefined ? 'POST' : 'PUT',
      url: `/fhir/R4/${type}${r.id === undefined ? '' : `/${String(r.id)}`}`,
      headers: { ...headers, 'content-type': 'application/fhir+json' },
      payload: resourceText(r),
    });
    if (res.statusCode >= 300) throw new Error(`${type}/${String(r.id)}: ${res.statusCode} ${res.body}`);
    urls.push(`/fhir/R4/${type}/${String((res.json() as { id: unknown }).id)}`);
  }
  return urls;
}
