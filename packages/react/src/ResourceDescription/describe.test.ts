import type { Observation } from '@hearth/core';
import { describe, expect, it } from 'vitest';
import { abnormalFlag, describeResource, observationValue } from './describe.js';

const glucose = (value: number, extra: Partial<Observation> = {}): Observation => ({
  resourceType: 'Observation',
  status: 'final',
  code: { text: 'Glucose' },
  valueQuantity: { value, unit: 'mg/dL' },
  referenceRange: [{ low: { value: 70 }, high: { value: 100 } }],
  ...extra,
});
const interpretation = (code: string) => [
  { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code }] },
];

describe('abnormalFlag', () => {
  it('takes the interpretation first, N meaning normal', () => {
    expect(abnormalFlag(glucose(90, { interpretation: interpretation('HH') }))).toBe('Critically high');
    expect(abnormalFlag(glucose(140, { interpretation: interpretation('N') }))).toBeUndefined();
  });

  it('else compares the value with the reference range', () => {
    expect(abnormalFlag(glucose(140))).toBe('High');
    expect(abnormalFlag(glucose(60))).toBe('Low');
    expect(abnormalFlag(glucose(85))).toBeUndefined();
    expect(abnormalFlag(glucose(140, { referenceRange: undefined }))).toBeUndefined();
  });
});

describe('describeResource', () => {
  it('says what a result is, its value with units, and its flag', () => {
    expect(describeResource(glucose(140) as never)).toEqual({
      title: 'Glucose',
      details: ['140 mg/dL'],
      status: 'final',
      flag: 'High',
    });
    expect(
      observationValue({
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'Blood pressure' },
        component: [
          { code: { text: 'Systolic' }, valueQuantity: { value: 120, unit: 'mmHg' } },
          { code: { text: 'Diastolic' }, valueQuantity: { value: 80, unit: 'mmHg' } },
        ],
      }),
    ).toBe('Systolic 120 mmHg, Diastolic 80 mmHg');
  });

  it('describes a prescription by its medication and dose, and any other type by its name and status', () => {
    expect(
      describeResource({
        resourceType: 'MedicationRequest',
        status: 'active',
        intent: 'order',
        medicationCodeableConcept: { text: 'Amoxicillin 500 mg' },
        dosageInstruction: [{ text: 'One capsule three times a day' }],
      }),
    ).toEqual({
      title: 'Amoxicillin 500 mg',
      details: ['One capsule three times a day', 'order'],
      status: 'active',
      flag: undefined,
    });
    expect(
      describeResource({ resourceType: 'Flag', id: 'f1', status: 'active', code: { text: 'Fall risk' } }),
    ).toMatchObject({
      status: 'active',
      details: [],
    });
  });
});
