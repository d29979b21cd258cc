/**
 * Conformance over real data: every example of the R4 specification that is valid FHIR, and
 * every resource of the shared Synthea patients, must pass the validator. The data sits in
 * ../shared/data beside the repository; without it these tests are skipped.
 */
import { getSchema } from '@hearth/definitions';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { breather, readTar } from './spec-data.test-util.js';
import { createValidator } from './validator.js';

const DATA = resolve(import.meta.dirname, '../../../../../shared/data');
const EXAMPLES = join(DATA, 'fhir-r4-spec', 'hl7.fhir.r4.examples-4.0.1.tgz');
const SYNTHEA = join(DATA, 'synthea-r4');

/**
 * Spec examples that are not valid FHIR R4, each with the reason. The validator must reject
 * each of them (so that this list only ever names real defects of the examples).
 */
const INVALID_EXAMPLES: Record<string, string> = {
  // ImplementationGuide.name and .status are 1..1; the package's own IG resource has neither.
  'ImplementationGuide-fhir.json': 'missing required name and status',
  'ig-r4.json': 'missing required name and status (a copy of ImplementationGuide-fhir)',
  // Questionnaire.item.linkId is 1..1; the nested items of this example have none.
  'Questionnaire-qs1.json': 'nested items without the required linkId',
  // SearchParameter.base is 1..*; these generated extension search parameters have none.
  'SearchParameter-codesystem-extensions-CodeSystem-author.json': 'missing required base',
  'SearchParameter-codesystem-extensions-CodeSystem-effective.json': 'missing required base',
  'SearchParameter-codesystem-extensions-CodeSystem-end.json': 'missing required base',
  'SearchParameter-codesystem-extensions-CodeSystem-keyword.json': 'missing required base',
  'SearchParameter-codesystem-extensions-CodeSystem-workflow.json': 'missing required base',
  'SearchParameter-valueset-extensions-ValueSet-author.json': 'missing required base',
  'SearchParameter-valueset-extensions-ValueSet-effective.json': 'missing required base',
  'SearchParameter-valueset-extensions-ValueSet-end.json': 'missing required base',
  'SearchParameter-valueset-extensions-ValueSet-keyword.json': 'missing required base',
  'SearchParameter-valueset-extensions-ValueSet-workflow.json': 'missing required base',
  // References to a type the element does not allow (the HL7 validator reports these too).
  'DeviceMetric-example.json': 'parent refers to a DeviceDefinition; R4 allows Reference(Device)',
  'DeviceUseStatement-example.json': 'reasonReference refers to a Procedure, which R4 does not allow',
  'MedicationRequest-medrx0301.json':
    'dispenseRequest.performer refers to a Practitioner; R4 allows Reference(Organization)',
  'Observation-clinical-gender.json': 'performer refers to an Encounter, which R4 does not allow',
  'OrganizationAffiliation-orgrole1.json': 'network refers to "Network/...", not an R4 resource type',
  // A modifier extension nobody defines cannot be safely ignored (extensibility.html#modifierExtension).
  'Basic-referral.json': 'modifier extensions of http://example.org/do-not-use/..., which no definition describes',
  // A vital sign SHALL conform to its vital signs profile (hl7.org/fhir/R4/observation-vitalsigns.html);
  // bodytemp, like every one of them, requires effective[x]. The reference validator, which applies
  // the profile by code too, reports the same.
  'Observation-f202.json': 'a body temperature (LOINC 8310-5) without the effective[x] that bodytemp requires',
  // An id is at most 64 characters; this one has 73.
  'SearchParameter-questionnaireresponse-extensions-QuestionnaireResponse-item-subject.json':
    'id longer than 64 characters',
};

function summarize(issues: OperationOutcomeIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.expression?.[0]}: ${i.details?.text}`)
    .join('; ');
}

const validator = createValidator(getSchema());

/** Warnings (dom-6: no narrative, ...) do not make a resource invalid. */
function errorsOf(issues: OperationOutcomeIssue[]): OperationOutcomeIssue[] {
  return issues.filter((i) => i.severity === 'error' || i.severity === 'fatal');
}

for (const [what, path] of [
  ['R4 examples conformance', EXAMPLES],
  ['Synthea conformance', SYNTHEA],
]) {
  if (!existsSync(path)) {
    console.warn(`Skipping ${what}: ${path} not found (the shared test data sits beside the repository)`);
  }
}

describe.skipIf(!existsSync(EXAMPLES))('R4 specification examples (hl7.fhir.r4.examples 4.0.1)', () => {
  // Minutes of validation on a busy machine (seconds on a quiet one).
  it('accepts every valid example and rejects the known invalid ones', { timeout: 600_000 }, async () => {
    const breathe = breather();
    let total = 0;
    let passed = 0;
    const unexpected: string[] = [];
    const rejected = new Set<string>();
    for (const [path, content] of readTar(gunzipSync(readFileSync(EXAMPLES)))) {
      const file = path.slice(path.lastIndexOf('/') + 1);
      if (!file.endsWith('.json') || file === 'package.json' || file.startsWith('.')) {
        continue;
      }
      const resource = JSON.parse(content.toString('utf8'));
      if (typeof resource.resourceType !== 'string') {
        continue;
      }
      total++;
      await breathe();
      const issues = errorsOf(validator.validate(resource));
      if (issues.length === 0) {
        passed++;
      } else if (file in INVALID_EXAMPLES) {
        rejected.add(file);
      } else {
        unexpected.push(`${file}: ${summarize(issues)}`);
      }
    }
    console.log(`R4 examples: ${passed} of ${total} pass; ${rejected.size} known invalid (allow-listed)`);
    expect(total).toBeGreaterThan(5000);
    expect(unexpected).toEqual([]);
    expect([...rejected].sort()).toEqual(Object.keys(INVALID_EXAMPLES).sort());
  });
});

describe.skipIf(!existsSync(SYNTHEA))('Synthea R4 bundles', () => {
  it('accepts every resource of the provider and patient bundles', { timeout: 600_000 }, async () => {
    const breathe = breather();
    const files = [
      ...readdirSync(SYNTHEA).filter((f) => f.endsWith('.json.gz')),
      ...readdirSync(join(SYNTHEA, 'patients')).map((f) => join('patients', f)),
    ];
    let total = 0;
    let failed = 0;
    let micros = 0;
    const failures: string[] = [];
    for (const file of files) {
      await breathe();
      const bundle = JSON.parse(gunzipSync(readFileSync(join(SYNTHEA, file))).toString('utf8'));
      const started = performance.now();
      for (const entry of bundle.entry) {
        total++;
        const issues = errorsOf(validator.validate(entry.resource));
        if (issues.length > 0 && ++failed <= 20) {
          failures.push(`${file} ${entry.resource.resourceType}/${entry.resource.id}: ${summarize(issues)}`);
        }
      }
      micros += (performance.now() - started) * 1000;
      if (file === files[files.length - 1]) {
        expect(errorsOf(validator.validate(bundle))).toEqual([]); // and one bundle as a whole
      }
    }
    console.log(`Synthea: ${total - failed} of ${total} resources pass, ${(micros / total).toFixed(1)} µs each`);
    expect(files.length).toBeGreaterThanOrEqual(100);
    expect(total).toBeGreaterThan(70_000);
    expect(failures).toEqual([]);
    expect(failed).toBe(0);
  });
});
