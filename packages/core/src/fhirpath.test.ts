import { describe, expect, it } from 'vitest';
import type { Observation, Patient } from '@hearth/fhir-types';
import { evalFhirPath, evalFhirPathBoolean, evalFhirPathString, evalFhirPathTyped } from './fhirpath.js';

const patient: Patient = {
  resourceType: 'Patient',
  id: 'p1',
  birthDate: '1990-05-17',
  active: true,
  name: [
    { use: 'official', given: ['Ada', 'King'], family: 'Lovelace' },
    { use: 'nickname', given: ['Addie'] },
  ],
};

const observation: Observation = {
  resourceType: 'Observation',
  status: 'final',
  code: { text: 'Weight' },
  valueQuantity: { value: 72.5, unit: 'kg' },
};

describe('evalFhirPath', () => {
  it('evaluates paths, functions and filters to plain values', () => {
    expect(evalFhirPath<string>('Patient.name.given', patient)).toEqual(['Ada', 'King', 'Addie']);
    expect(evalFhirPath("name.where(use = 'official').family", patient)).toEqual(['Lovelace']);
    expect(evalFhirPath('name.given.count()', patient)).toEqual([3]);
    expect(evalFhirPath('birthDate', patient)).toEqual(['1990-05-17']);
    expect(evalFhirPath('missing', patient)).toEqual([]);
  });

  it('knows the R4 model: choice elements and types', () => {
    expect(evalFhirPath('Observation.value.value', observation)).toEqual([72.5]);
    expect(evalFhirPath('value.ofType(Quantity).unit', observation)).toEqual(['kg']);
    expect(evalFhirPath('value is Quantity', observation)).toEqual([true]);
  });

  it('takes variables and throws on syntax errors', () => {
    expect(evalFhirPath('name.given.where($this = %who)', patient, { who: 'King' })).toEqual(['King']);
    expect(() => evalFhirPath('name.(', patient)).toThrow();
  });

  it('reports the type of each value', () => {
    expect(evalFhirPathTyped('birthDate | active | name.first() | id', patient)).toEqual([
      { type: 'date', value: '1990-05-17' },
      { type: 'boolean', value: true },
      { type: 'HumanName', value: patient.name?.[0] },
      { type: 'string', value: 'p1' }, // Resource.id is a System.String in the R4 model
    ]);
    expect(evalFhirPathTyped("'x' | 1 | 2.5", {})).toEqual([
      { type: 'string', value: 'x' },
      { type: 'integer', value: 1 },
      { type: 'decimal', value: 2.5 },
    ]);
  });

  it('evaluates conditions and strings', () => {
    expect(evalFhirPathBoolean('active', patient)).toBe(true);
    expect(evalFhirPathBoolean('name.count() > 5', patient)).toBe(false);
    expect(evalFhirPathBoolean('name', patient)).toBe(false);
    expect(evalFhirPathBoolean('birthDate', patient)).toBe(true);
    expect(evalFhirPathString('name.family', patient)).toBe('Lovelace');
    expect(evalFhirPathString('nothing', patient)).toBeUndefined();
  });
});
