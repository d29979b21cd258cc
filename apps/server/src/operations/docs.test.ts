import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { renderOperationsCatalog, renderOperationsReference } from './docs.js';

const PAGE = resolve(import.meta.dirname, '../../../../docs/operations.md');
const CATALOG = resolve(import.meta.dirname, '../../../../docs/operations.json');

let t: TestApp;
beforeAll(async () => {
  // The registry as services.ts builds it: every module's operations.
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('docs/operations.md', () => {
  it('is up to date with the OperationRegistry (run `npm run docs:operations` after adding or changing an operation)', () => {
    const page = renderOperationsReference(t.services.operations);
    // `npm run docs:operations` runs this test with HEARTH_WRITE_DOCS=1 to write the page.
    if (process.env.HEARTH_WRITE_DOCS === '1') {
      writeFileSync(PAGE, page);
    }
    expect(readFileSync(PAGE, 'utf8')).toBe(page);
  });

  it('docs/operations.json (read by the documentation site) is up to date with the OperationRegistry', () => {
    const catalog = renderOperationsCatalog(t.services.operations);
    if (process.env.HEARTH_WRITE_DOCS === '1') {
      writeFileSync(CATALOG, catalog);
    }
    expect(readFileSync(CATALOG, 'utf8')).toBe(catalog);
    const names = (JSON.parse(catalog) as { name: string }[]).map((e) => e.name);
    expect([...names].sort()).toEqual(
      t.services.operations
        .all()
        .map((e) => e.name)
        .sort(),
    );
  });

  it('lists every registered operation with its definition', () => {
    const page = renderOperationsReference(t.services.operations);
    for (const entry of t.services.operations.all()) {
      expect(page).toContain(`| \`$${entry.name}\` |`);
      expect(page).toContain(`(${entry.definition.url})`);
    }
  });
});
