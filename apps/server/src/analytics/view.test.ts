// The SQL on FHIR v2 conformance suite, every case through the evaluator: expected rows (as a
// multiset, and column order where the case names it) or an expected error. Skipped without the data.
import { describe, expect, it } from 'vitest';
import { canonicalRows, loadSofCases, type SofCase } from '../test/sof-suite.js';
import { compileView, type Row } from './view.js';
import { ViewError } from './view-error.js';

const cases = loadSofCases();

function run(c: SofCase): { columns: string[]; rows: Row[] } {
  const view = compileView(c.view);
  return { columns: view.columns.map((col) => col.name), rows: c.resources.flatMap((r) => view.rows(r)) };
}

describe.runIf(cases.length > 0)('SQL on FHIR v2 conformance (evaluator)', () => {
  it('has the 134 cases of the suite', () => {
    expect(cases.length).toBe(134);
  });

  it.each(cases.map((c) => [`${c.file}: ${c.title}`, c] as const))('%s', (_name, c) => {
    if (c.expectError) {
      expect(() => run(c)).toThrow(ViewError);
      return;
    }
    const { columns, rows } = run(c);
    expect(canonicalRows(rows)).toEqual(canonicalRows(c.expect ?? []));
    if (c.expectColumns) expect(columns).toEqual(c.expectColumns);
  });
});

describe('view evaluation details', () => {
  it('names the element at fault in a view error', () => {
    expect(() => compileView({ resource: 'Patient', select: [{ column: [{ name: '1x', path: 'id' }] }] })).toThrow(
      /select\[0\]\.column\[0\]\.name/,
    );
    expect(() => compileView({ resource: 'Patient', select: [{ forEach: 'name.(' }] })).toThrow(/select\[0\]\.forEach/);
  });

  it('refuses an unknown resource type when told the known ones', () => {
    expect(() =>
      compileView({ resource: 'Nope', select: [{ column: [{ name: 'id', path: 'id' }] }] }, (t) => t === 'Patient'),
    ).toThrow(/Nope is not a resource type/);
  });

  it('keeps rows in the order of the resource and its elements', () => {
    const view = compileView({
      resource: 'Patient',
      select: [
        { column: [{ name: 'id', path: 'getResourceKey()' }] },
        { forEach: 'name', column: [{ name: 'family', path: 'family' }] },
      ],
    });
    expect(view.rows({ resourceType: 'Patient', id: 'a', name: [{ family: 'X' }, { family: 'Y' }] })).toEqual([
      { id: 'a', family: 'X' },
      { id: 'a', family: 'Y' },
    ]);
  });
});
