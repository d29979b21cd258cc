import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OperationOutcomeError, type Resource } from '@hearth/core';
import { loadFhirPatchCases, PATCH_SUITE_DIR } from '../../test/fhir-xml.js';
import { applyFhirPathPatch } from './fhirpath-patch.js';
import { applyJsonPatch } from './json-patch.js';
import { applyPatchBody } from './apply.js';

const FHIRPATH_SUITE = `${PATCH_SUITE_DIR}/fhir-patch-tests.xml`;
const JSON_SUITE = `${PATCH_SUITE_DIR}/json-patch-tests.json`;

describe.skipIf(!existsSync(FHIRPATH_SUITE))('FHIRPath Patch: HL7 fhir-test-cases r4/patch', () => {
  const cases = existsSync(FHIRPATH_SUITE) ? loadFhirPatchCases() : [];
  it('loads the suite', () => {
    expect(cases.length).toBeGreaterThanOrEqual(33);
  });
  for (const c of cases) {
    it(c.name, () => {
      if (c.error) {
        expect(() => applyFhirPathPatch(c.input, c.diff)).toThrow(OperationOutcomeError);
        try {
          applyFhirPathPatch(c.input, c.diff);
        } catch (err) {
          expect((err as OperationOutcomeError).status).toBe(422);
          expect((err as Error).message).toContain('No content found at');
        }
        return;
      }
      const before = structuredClone(c.input);
      expect(applyFhirPathPatch(c.input, c.diff)).toEqual(c.output);
      expect(c.input).toEqual(before); // the input is never modified
    });
  }
});

interface JsonPatchCase {
  comment: string;
  doc: object;
  patch: unknown[];
  expected?: unknown;
  error?: string;
  disabled?: boolean;
}

describe.skipIf(!existsSync(JSON_SUITE))('JSON Patch: RFC 6902 cases from fhir-test-cases', () => {
  const cases: JsonPatchCase[] = existsSync(JSON_SUITE) ? JSON.parse(readFileSync(JSON_SUITE, 'utf8')) : [];
  for (const c of cases.filter((x) => !x.disabled)) {
    it(c.comment, () => {
      if (c.error) {
        expect(() => applyJsonPatch(c.doc, c.patch)).toThrow(OperationOutcomeError);
      } else {
        expect(applyJsonPatch(c.doc, c.patch)).toEqual(c.expected);
      }
    });
  }
});

describe('patch bodies', () => {
  const patient: Resource = { resourceType: 'Patient', id: 'p1', name: [{ given: ['A', 'B'] }] };

  it('refuses to change resourceType or id, and prototype paths', () => {
    expect(() => applyPatchBody(patient, [{ op: 'replace', path: '/id', value: 'other' }])).toThrow(/id/);
    expect(() => applyPatchBody(patient, [{ op: 'replace', path: '/resourceType', value: 'Group' }])).toThrow(
      /resourceType/,
    );
    expect(() => applyPatchBody(patient, [{ op: 'add', path: '/__proto__/polluted', value: true }])).toThrow(
      OperationOutcomeError,
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers 400 for a malformed patch and 422 for one that cannot apply', () => {
    const status = (body: unknown) => {
      try {
        applyPatchBody(patient, body);
        return 200;
      } catch (err) {
        return (err as OperationOutcomeError).status;
      }
    };
    expect(status({ op: 'add' })).toBe(400);
    expect(status([{ op: 'frobnicate', path: '/a' }])).toBe(400);
    expect(status([{ op: 'remove', path: '/telecom/0' }])).toBe(422);
    expect(status([{ op: 'test', path: '/id', value: 'nope' }])).toBe(422);
    expect(status({ resourceType: 'Parameters', parameter: [{ name: 'operation', part: [] }] })).toBe(400);
    const badPath = {
      resourceType: 'Parameters',
      parameter: [
        {
          name: 'operation',
          part: [
            { name: 'type', valueCode: 'delete' },
            { name: 'path', valueString: 'Patient.name.(((' },
          ],
        },
      ],
    };
    expect(status(badPath)).toBe(400);
  });

  it('keeps primitive extensions in step when FHIRPath Patch deletes and moves list items', () => {
    const withExt: Resource = {
      resourceType: 'Patient',
      name: [{ given: ['A', 'B', 'C'], _given: [null, { id: 'b' }, null] }],
    };
    const op = (parts: object[]) => ({ resourceType: 'Parameters', parameter: [{ name: 'operation', part: parts }] });
    const deleted = applyFhirPathPatch(
      withExt,
      op([
        { name: 'type', valueCode: 'delete' },
        { name: 'path', valueString: 'Patient.name.given[0]' },
      ]),
    ) as Resource & { name: { given: string[]; _given: unknown[] }[] };
    expect(deleted.name[0].given).toEqual(['B', 'C']);
    expect(deleted.name[0]._given).toEqual([{ id: 'b' }, null]);
  });
});
