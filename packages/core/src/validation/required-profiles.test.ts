import { getSchema } from '@hearth/definitions';
import { describe, expect, it } from 'vitest';
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createValidator } from './validator.js';

const validator = createValidator(getSchema());
const LOINC = 'http://loinc.org';
const UCUM = 'http://unitsofmeasure.org';

const vitalSignsCategory = [
  { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] },
];

/** A body temperature as the bodytemp profile wants it (hl7.org/fhir/R4/bodytemp.html). */
const temperature = {
  resourceType: 'Observation',
  status: 'final',
  category: vitalSignsCategory,
  code: { coding: [{ system: LOINC, code: '8310-5', display: 'Body temperature' }] },
  subject: { reference: 'Patient/p1' },
  effectiveDateTime: '2024-03-01T10:00:00Z',
  valueQuantity: { value: 37.2, unit: 'C', system: UCUM, code: 'Cel' },
};

const errors = (resource: unknown): string[] =>
  validator
    .validate(resource)
    .filter((i: OperationOutcomeIssue) => i.severity === 'error')
    .map((i) => `${i.expression?.[0]}: ${i.details?.text}`);

describe('the vital signs profiles, applied by code (hl7.org/fhir/R4/observation-vitalsigns.html)', () => {
  it('accepts a body temperature that conforms to bodytemp', () => {
    expect(validator.validate(temperature)).toEqual([]);
    expect(errors({ ...temperature, valueQuantity: { ...temperature.valueQuantity, code: '[degF]' } })).toEqual([]);
  });

  it('refuses a unit outside the profile’s required value set, at the unit code', () => {
    expect(errors({ ...temperature, valueQuantity: { value: 310, unit: 'K', system: UCUM, code: 'K' } })).toEqual([
      'Observation.valueQuantity.code: The code is not in the required value set http://hl7.org/fhir/ValueSet/ucum-bodytemp|4.0.1',
    ]);
  });

  it('refuses a value without its UCUM system and code', () => {
    expect(errors({ ...temperature, valueQuantity: { value: 37.2, unit: 'C' } })).toEqual([
      'Observation.valueQuantity.system: Observation.value[x]:valueQuantity.system: minimum required = 1, but only found 0',
      'Observation.valueQuantity.code: Observation.value[x]:valueQuantity.code: minimum required = 1, but only found 0',
    ]);
  });

  it('refuses a vital sign without the vital-signs category, at the category', () => {
    const { category: _category, ...uncategorised } = temperature;
    expect(errors(uncategorised)).toEqual([
      'Observation.category: Observation.category: minimum required = 1, but only found 0',
      'Observation.category: Slice Observation.category:VSCat: minimum required = 1, but only found 0',
    ]);
    expect(errors({ ...temperature, category: [{ text: 'vitals' }] })).toEqual([
      'Observation.category: Slice Observation.category:VSCat: minimum required = 1, but only found 0',
    ]);
  });

  it('refuses a vital sign without a value or a dataAbsentReason (vs-2)', () => {
    const { valueQuantity: _value, ...empty } = temperature;
    expect(errors(empty)).toEqual([
      'Observation: Constraint failed: vs-2: If there is no component or hasMember element then either a value[x] or a data absent reason must be present.',
    ]);
    const absent = { ...empty, dataAbsentReason: { coding: [{ system: 'http://x.org', code: 'masked' }] } };
    expect(errors(absent)).toEqual([]);
  });

  it('refuses an effective time less precise than the day (vs-1) and a missing subject', () => {
    const { subject: _subject, ...anonymous } = temperature;
    expect(errors({ ...anonymous, effectiveDateTime: '2024-03' })).toEqual([
      'Observation.subject: Observation.subject: minimum required = 1, but only found 0',
      'Observation.effectiveDateTime: Constraint failed: vs-1: if Observation.effective[x] is dateTime and has a value then that value shall be precise to the day',
    ]);
  });

  it('applies bodytemp to a body temperature named in SNOMED CT only, as the reference validator does', () => {
    const snomed = { ...temperature, code: { coding: [{ system: 'http://snomed.info/sct', code: '276885007' }] } };
    expect(errors(snomed)).toEqual([
      'Observation.code.coding: Slice Observation.code.coding:BodyTempCode: minimum required = 1, but only found 0',
    ]);
    const both = { ...temperature, code: { coding: [...snomed.code.coding, ...temperature.code.coding] } };
    expect(errors(both)).toEqual([]);
  });

  it('wants both blood pressure components, each in mm[Hg]', () => {
    const component = (code: string, value: number, unit = 'mm[Hg]') => ({
      code: { coding: [{ system: LOINC, code }] },
      valueQuantity: { value, unit, system: UCUM, code: unit },
    });
    const bp = {
      ...temperature,
      code: { coding: [{ system: LOINC, code: '85354-9' }] },
      valueQuantity: undefined,
      component: [component('8480-6', 120), component('8462-4', 80)],
    };
    expect(errors(bp)).toEqual([]);
    expect(errors({ ...bp, component: [component('8480-6', 120)] })).toEqual([
      'Observation.component: Observation.component: minimum required = 2, but only found 1',
      'Observation.component: Slice Observation.component:DiastolicBP: minimum required = 1, but only found 0',
    ]);
    expect(errors({ ...bp, component: [component('8480-6', 120), component('8462-4', 11, 'kPa')] })).toEqual([
      'Observation.component[1].valueQuantity: The code is not in the required value set http://hl7.org/fhir/ValueSet/ucum-vitals-common|4.0.1',
      'Observation.component[1].valueQuantity.code: Value must be exactly "mm[Hg]" (fixedCode)',
    ]);
    const { valueQuantity: _value, ...noValue } = component('8462-4', 80);
    expect(errors({ ...bp, component: [component('8480-6', 120), noValue] })).toEqual([
      'Observation.component[1]: Constraint failed: vs-3: If there is no a value a data absent reason must be present',
    ]);
  });

  it('checks vital signs inside a Bundle, at their place in it', () => {
    const { category: _category, ...uncategorised } = temperature;
    const bundle = { resourceType: 'Bundle', type: 'collection', entry: [{ resource: uncategorised }] };
    expect(errors(bundle)).toContain(
      'Bundle.entry[0].resource.category: Slice Observation.category:VSCat: minimum required = 1, but only found 0',
    );
  });

  it('does not repeat what the base definitions found at the same element', () => {
    const { status: _status, ...noStatus } = temperature;
    expect(errors(noStatus)).toEqual(['Observation.status: Missing required element "status"']);
  });

  it('is left out when the caller asks so (a server writing resources)', () => {
    const { category: _category, ...uncategorised } = temperature;
    expect(validator.validate(uncategorised, { requiredProfiles: false })).toEqual([]);
  });

  it('leaves Observations with other codes to the base definition', () => {
    const glucose = {
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: LOINC, code: '2339-0' }] },
    };
    expect(validator.validate(glucose)).toEqual([]);
  });
});
