import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { renderOperationsReference } from './docs.js';

const PAGE = resolve(import.meta.dirname, '../../../../docs/operations.md');

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

  it('lists every registered operation with its definition', () => {
    const page = renderOperationsReference(t.services.operations);
    for (const entry of t.services.operations.all()) {
      expect(page).toContain(`| \`$${entry.name}\` |`);
      expect(page).toContain(`(${entry.definition.url})`);
    }
  });
});
