// Test helper: the SQL on FHIR v2 conformance suite (../shared/data/sql-on-fhir-v2-tests, the
// specification's tests/*.json: resources, then tests with a view and the expected rows or an
// expected error). Parsed keeping decimal precision, as the spec's boundary tests need.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseKeepingDecimals } from '../storage/decimal-json.js';

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
