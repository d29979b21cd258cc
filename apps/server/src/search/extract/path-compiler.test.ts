import { describe, expect, it } from 'vitest';
import { compileExpression } from './evaluate.js';
import { compilePath } from './path-compiler.js';

const run = (expr: string, resource: Record<string, unknown>) => {
  const fn = compileExpression(expr)!;
  return fn([{ value: resource, type: String(resource.resourceType) }], resource).map((v) => v.value);
};

describe('path compiler', () => {
  const obs = {
    resourceType: 'Observation',
    subject: { reference: 'Patient/1' },
    performer: [{ reference: 'Practitioner/2' }, { reference: '#p' }],
    contained: [{ resourceType: 'Patient', id: 'p' }],
    valueQuantity: { value: 5, unit: 'mg' },
    component: [
      { code: { text: 'a' }, valueString: 'x' },
      { code: { text: 'b' }, valueQuantity: { value: 1 } },
    ],
    extension: [{ url: 'http://e/1', valueString: 'one' }],
  };
  it('navigates paths, choices and unions', () => {
    expect(run('Observation.value.ofType(Quantity)', obs)).toEqual([{ value: 5, unit: 'mg' }]);
    expect(run('(Observation.value as Quantity)', obs)).toEqual([{ value: 5, unit: 'mg' }]);
    expect(run('Observation.component.value.ofType(string)', obs)).toEqual(['x']);
    expect(run('Observation.code | Observation.component.code', obs)).toEqual([{ text: 'a' }, { text: 'b' }]);
    expect(run('Patient.name', obs)).toEqual([]);
  });
  it('filters references by target type, including contained targets', () => {
    expect(run('Observation.subject.where(resolve() is Patient)', obs)).toEqual([{ reference: 'Patient/1' }]);
    expect(run('Observation.performer.where(resolve() is Patient)', obs)).toEqual([{ reference: '#p' }]);
  });
  it('reads extensions and where() on a field', () => {
    expect(run("Observation.extension('http://e/1').value", obs)).toEqual(['one']);
    expect(run("Observation.component.where(code.text = 'b').value", obs)).toEqual([{ value: 1 }]);
  });
  it('leaves other expressions to the fhirpath package', () => {
    expect(compilePath('Patient.deceased.exists() and Patient.deceased != false')).toBeUndefined();
    expect(
      run('Patient.deceased.exists() and Patient.deceased != false', {
        resourceType: 'Patient',
        deceasedBoolean: true,
      }),
    ).toEqual([true]);
  });
});
