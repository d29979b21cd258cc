/**
 * The reference FHIR validator's own test cases (../shared/data/fhir-validator-cases: base R4,
 * JSON, each an instance and the number of errors the reference validator reports), each sent
 * byte for byte to `$validate` of a real server.
 *
 * The verdict compared is the one the data's README names: valid (the reference validator
 * reports no error) or invalid (one error or more). Hearth's verdict is read from the
 * OperationOutcome it answers: invalid when it has an issue of severity error or fatal, whether
 * the answer is 200 (the resource was validated) or 400 (the body is not JSON, so there was no
 * resource to validate: deliberately malformed instances). A 5xx is never a verdict. The error
 * counts are printed beside each miss; they are not compared, since both validators phrase and
 * split problems differently (one bad element may be one issue or three).
 *
 * Without the shared data the suite is skipped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const CASES = resolve(import.meta.dirname, '../../../../../shared/data/fhir-validator-cases');

interface ValidatorCase {
  name: string;
  file: string;
  module: string;
  expectedErrorCount: number;
  firstExpectedError?: string;
}

/**
 * Cases whose verdict Hearth does not reach, each with the reason. The test fails when one of them
 * starts passing, so the list only names real gaps.
 */
const UNMET: Record<string, string> = {
  'bundle-id-4':
    "a CVX display that differs from the code system's: Hearth holds no CVX code system, so the display cannot be checked",
  'uk-msg': 'a SNOMED CT display: Hearth holds no SNOMED CT release',
  'dr-example-org':
    'the reference validator refuses example.org URLs in an Attachment.url by its own policy; the specification has no such rule (its own examples use example.org throughout)',
  'pat-example-extensions':
    'an extension whose definition cannot be found: the reference validator refuses unknown extensions outside its allowed domains by policy; R4 lets any extension be ignored unless it is a modifier',

  'bundle-with-contained':
    'narrative hyperlinks (<a href="#...">) that point to no anchor: Hearth warns, since the R4 specification\'s own v3 CodeSystems and ValueSets carry such links and must stay valid',
};

const cases: ValidatorCase[] = existsSync(join(CASES, 'cases.json'))
  ? (JSON.parse(readFileSync(join(CASES, 'cases.json'), 'utf8')) as ValidatorCase[])
  : [];

if (cases.length === 0) {
  console.warn(
    `Skipping the reference validator's cases: ${CASES} not found (the shared test data sits beside the repository)`,
  );
}

interface Outcome {
  resourceType?: string;
  issue?: { severity: string; expression?: string[]; details?: { text?: string } }[];
}

describe.skipIf(cases.length === 0)("the reference FHIR validator's test cases through $validate", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('gives the reference verdict (valid or invalid) for every case but the listed gaps', async () => {
    const misses: string[] = [];
    const unexpectedlyMet: string[] = [];
    let met = 0;
    for (const c of cases) {
      const body = readFileSync(join(CASES, c.file), 'utf8');
      // The type from the text: some instances are deliberately not JSON.
      const type = /"resourceType"\s*:\s*"([A-Za-z]+)"/.exec(body)?.[1] ?? 'Patient';
      const res = await t.app.inject({
        method: 'POST',
        url: `/fhir/R4/${type}/$validate`,
        headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
        payload: body,
      });
      expect(res.statusCode, `${c.name}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
      const outcome = res.json() as Outcome;
      expect(outcome.resourceType).toBe('OperationOutcome');
      const errors = (outcome.issue ?? []).filter((i) => i.severity === 'error' || i.severity === 'fatal');
      const verdictMet = errors.length > 0 === c.expectedErrorCount > 0;
      if (verdictMet) {
        met++;
      }
      if (c.name in UNMET) {
        if (verdictMet) {
          unexpectedlyMet.push(
            `${c.name}: ${errors.map((i) => `${i.expression?.[0]}: ${i.details?.text}`).join('; ')}`,
          );
        }
      } else if (!verdictMet) {
        const found = errors
          .slice(0, 3)
          .map((i) => `${i.expression?.[0]}: ${i.details?.text}`)
          .join('; ');
        misses.push(
          `${c.name} (${c.module}): expected ${c.expectedErrorCount} errors (${c.firstExpectedError ?? 'valid'}), got ${errors.length} ${found}`,
        );
      }
    }
    console.log(`Reference validator cases: ${met} of ${cases.length} give the reference verdict`);
    expect(misses).toEqual([]);
    expect(unexpectedlyMet).toEqual([]);
    expect(met).toBe(cases.length - Object.keys(UNMET).length);
  });
});
