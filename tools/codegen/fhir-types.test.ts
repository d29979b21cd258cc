/**
 * The committed packages/fhir-types/src must be what the generator makes from the current
 * definitions: after a change to a platform StructureDefinition, regenerate with
 * `npm run generate -w @hearth/fhir-types`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateFhirTypes } from './fhir-types.js';

const committed = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'fhir-types', 'src');
const fresh = mkdtempSync(join(tmpdir(), 'fhir-types-'));
afterAll(() => rmSync(fresh, { recursive: true, force: true }));

describe('generated FHIR types', () => {
  // Generating runs prettier over every file: seconds alone, a minute or more beside a busy suite.
  it('are up to date with the definitions', { timeout: 300_000 }, async () => {
    const { resourceTypes } = await generateFhirTypes(fresh);
    expect(resourceTypes).toBeGreaterThan(160);
    const names = readdirSync(fresh).sort();
    expect(readdirSync(committed).sort(), 'files (run npm run generate -w @hearth/fhir-types)').toEqual(names);
    const stale = names.filter(
      (n) => readFileSync(join(fresh, n), 'utf8') !== readFileSync(join(committed, n), 'utf8'),
    );
    expect(stale, 'stale generated files (run npm run generate -w @hearth/fhir-types)').toEqual([]);
  });
});
