import { describe, expect, it } from 'vitest';
import { evalSimplePath } from './simple-path.js';

const observation = {
  resourceType: 'Observation',
  code: { text: 'Weight' },
  effectiveDateTime: '2024-01-02',
  valueQuantity: { value: 70, unit: 'kg' },
  component: [{ code: { text: 'a' } }, { code: { text: 'b' } }],
};

describe('evalSimplePath', () => {
  it('reads paths, arrays and choice elements', () => {
    expect(evalSimplePath('Observation.code', observation)).toEqual([{ text: 'Weight' }]);
    expect(evalSimplePath('Observation.effective', observation)).toEqual(['2024-01-02']);
    expect(evalSimplePath('Observation.component.code.text', observation)).toEqual(['a', 'b']);
    expect(evalSimplePath('(Observation.value as Quantity)', observation)).toEqual([{ value: 70, unit: 'kg' }]);
    expect(evalSimplePath('Observation.value.ofType(Quantity)', observation)).toEqual([{ value: 70, unit: 'kg' }]);
    expect(evalSimplePath('(Observation.value as string)', observation)).toEqual([]);
  });

  it('keeps the parts of a union that apply to the resource type', () => {
    expect(evalSimplePath('Patient.birthDate | Observation.effective', observation)).toEqual(['2024-01-02']);
    expect(evalSimplePath('Observation.missing', observation)).toEqual([]);
  });

  it('leaves functions to the FHIRPath engine', () => {
    expect(evalSimplePath("Observation.code.where(text='Weight')", observation)).toBeUndefined();
    expect(evalSimplePath('Observation.subject.resolve()', observation)).toBeUndefined();
  });
});
