import { getSchema } from '@hearth/definitions';
import { describe, expect, it } from 'vitest';
import { ProfileValidator } from './profiles.js';
import type { ValidatorSchema } from './schema.js';
import type { ProfileDefinition, ProfileElement } from './snapshot.js';

const schema: ValidatorSchema = getSchema();
const BASE = 'http://example.org/fhir/StructureDefinition/';
const MRN = 'http://hospital.example.org/mrn';

function profile(
  id: string,
  type: string,
  elements: ProfileElement[],
  baseDefinition = `http://hl7.org/fhir/StructureDefinition/${type}`,
): ProfileDefinition {
  return {
    resourceType: 'StructureDefinition',
    url: BASE + id,
    name: id,
    type,
    kind: type === 'Extension' ? 'complex-type' : 'resource',
    derivation: 'constraint',
    baseDefinition,
    differential: { element: elements },
  };
}

const raceExtension = profile('race', 'Extension', [
  { id: 'Extension', path: 'Extension', max: '1' },
  { id: 'Extension.url', path: 'Extension.url', fixedUri: BASE + 'race' },
  { id: 'Extension.value[x]', path: 'Extension.value[x]', min: 1, type: [{ code: 'Coding' }] },
]);

const patientProfile = profile('my-patient', 'Patient', [
  { id: 'Patient', path: 'Patient' },
  {
    id: 'Patient.extension:race',
    path: 'Patient.extension',
    sliceName: 'race',
    min: 0,
    max: '1',
    type: [{ code: 'Extension', profile: [BASE + 'race'] }],
  },
  {
    id: 'Patient.identifier',
    path: 'Patient.identifier',
    min: 1,
    slicing: { discriminator: [{ type: 'value', path: 'system' }], rules: 'open' },
  },
  { id: 'Patient.identifier:mrn', path: 'Patient.identifier', sliceName: 'mrn', min: 1, max: '1' },
  { id: 'Patient.identifier:mrn.system', path: 'Patient.identifier.system', min: 1, fixedUri: MRN },
  { id: 'Patient.identifier:mrn.value', path: 'Patient.identifier.value', min: 1 },
  { id: 'Patient.name', path: 'Patient.name', min: 1 },
  { id: 'Patient.name.family', path: 'Patient.name.family', min: 1, maxLength: 20 },
  {
    id: 'Patient.gender',
    path: 'Patient.gender',
    min: 1,
    binding: { strength: 'required', valueSet: 'http://example.org/fhir/ValueSet/binary-gender' },
  },
  {
    id: 'Patient.generalPractitioner',
    path: 'Patient.generalPractitioner',
    type: [{ code: 'Reference', targetProfile: ['http://hl7.org/fhir/StructureDefinition/Practitioner'] }],
  },
]);

const vitalSigns = profile('vitals', 'Observation', [
  { id: 'Observation', path: 'Observation' },
  {
    id: 'Observation.category',
    path: 'Observation.category',
    min: 1,
    slicing: { discriminator: [{ type: 'pattern', path: '$this' }], rules: 'open' },
  },
  {
    id: 'Observation.category:VSCat',
    path: 'Observation.category',
    sliceName: 'VSCat',
    min: 1,
    max: '1',
    patternCodeableConcept: {
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }],
    },
  },
  {
    id: 'Observation.subject',
    path: 'Observation.subject',
    min: 1,
    type: [{ code: 'Reference', targetProfile: [BASE + 'my-patient'] }],
  },
  { id: 'Observation.value[x]', path: 'Observation.value[x]', type: [{ code: 'Quantity' }] },
  {
    id: 'Observation.value[x].system',
    path: 'Observation.value[x].system',
    min: 1,
    fixedUri: 'http://unitsofmeasure.org',
  },
  {
    id: 'Observation.component',
    path: 'Observation.component',
    slicing: { discriminator: [{ type: 'pattern', path: 'code' }], ordered: true, rules: 'closed' },
  },
  { id: 'Observation.component:systolic', path: 'Observation.component', sliceName: 'systolic', min: 1, max: '1' },
  {
    id: 'Observation.component:systolic.code',
    path: 'Observation.component.code',
    patternCodeableConcept: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] },
  },
  { id: 'Observation.component:diastolic', path: 'Observation.component', sliceName: 'diastolic', min: 1, max: '1' },
  {
    id: 'Observation.component:diastolic.code',
    path: 'Observation.component.code',
    patternCodeableConcept: { coding: [{ system: 'http://loinc.org', code: '8462-4' }] },
  },
]);

/** A profile on a profile: the child adds to the constraints of its base. */
const strictVitals = profile(
  'strict-vitals',
  'Observation',
  [
    { id: 'Observation', path: 'Observation' },
    { id: 'Observation.effective[x]', path: 'Observation.effective[x]', min: 1, type: [{ code: 'dateTime' }] },
    { id: 'Observation.status', path: 'Observation.status', fixedCode: 'final' },
  ],
  BASE + 'vitals',
);

/** Slices of value[x] by type, and of note by exists. */
const typed = profile('typed', 'Observation', [
  { id: 'Observation', path: 'Observation' },
  {
    id: 'Observation.value[x]',
    path: 'Observation.value[x]',
    slicing: { discriminator: [{ type: 'type', path: '$this' }], rules: 'closed' },
  },
  {
    id: 'Observation.value[x]:valueString',
    path: 'Observation.value[x]',
    sliceName: 'valueString',
    type: [{ code: 'string' }],
  },
  { id: 'Observation.value[x]:valueString', path: 'Observation.value[x]', sliceName: 'valueString', maxLength: 5 },
  {
    id: 'Observation.note',
    path: 'Observation.note',
    slicing: { discriminator: [{ type: 'exists', path: 'author[x]' }], rules: 'openAtEnd' },
  },
  { id: 'Observation.note:signed', path: 'Observation.note', sliceName: 'signed', max: '1' },
  { id: 'Observation.note:signed.author[x]', path: 'Observation.note.author[x]', min: 1 },
]);

/** Sliced by profile: the entries of a collection Bundle that are my-patients. */
const patientBundle = profile('patient-bundle', 'Bundle', [
  { id: 'Bundle', path: 'Bundle' },
  { id: 'Bundle.type', path: 'Bundle.type', fixedCode: 'collection' },
  {
    id: 'Bundle.entry',
    path: 'Bundle.entry',
    slicing: { discriminator: [{ type: 'profile', path: 'resource' }], rules: 'closed' },
  },
  { id: 'Bundle.entry:patient', path: 'Bundle.entry', sliceName: 'patient', min: 1 },
  {
    id: 'Bundle.entry:patient.resource',
    path: 'Bundle.entry.resource',
    min: 1,
    type: [{ code: 'Patient', profile: [BASE + 'my-patient'] }],
  },
]);

const definitions = new Map(
  [raceExtension, patientProfile, vitalSigns, strictVitals, typed, patientBundle].map((d) => [d.url, d]),
);
const validator = new ProfileValidator({
  schema,
  resolve: (url) => definitions.get(url),
  inValueSet: (valueSet, _system, code) =>
    valueSet === 'http://example.org/fhir/ValueSet/binary-gender' ? code === 'male' || code === 'female' : undefined,
});

function problems(resource: unknown, url: string): string[] {
  return validator.validate(resource, BASE + url).map((i) => `${i.severity} ${i.expression?.[0]}: ${i.details?.text}`);
}

const goodPatient = {
  resourceType: 'Patient',
  extension: [{ url: BASE + 'race', valueCoding: { system: 'urn:oid:2.16.840.1.113883.6.238', code: '2106-3' } }],
  identifier: [
    { system: 'http://other.example.org', value: 'x' },
    { system: MRN, value: '12345' },
  ],
  name: [{ family: 'Chalmers' }],
  gender: 'male',
  generalPractitioner: [{ reference: 'Practitioner/1' }],
};

const goodVitals = {
  resourceType: 'Observation',
  status: 'final',
  category: [
    { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] },
  ],
  code: { coding: [{ system: 'http://loinc.org', code: '85354-9' }] },
  subject: { reference: 'Patient/p1' },
  effectiveDateTime: '2024-01-01',
  component: [
    { code: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] }, valueQuantity: { value: 120 } },
    { code: { coding: [{ system: 'http://loinc.org', code: '8462-4' }] }, valueQuantity: { value: 80 } },
  ],
};

describe('ProfileValidator', () => {
  it('accepts resources that conform', () => {
    expect(problems(goodPatient, 'my-patient')).toEqual([]);
    expect(problems(goodVitals, 'vitals')).toEqual([]);
    expect(problems(goodVitals, 'strict-vitals')).toEqual([]);
  });

  it('checks cardinality narrowed by the profile, maxLength and the profile binding', () => {
    const { name: _name, gender: _gender, ...rest } = goodPatient;
    expect(problems({ ...rest, gender: 'other' }, 'my-patient')).toEqual([
      'error Patient.name: Patient.name: minimum required = 1, but only found 0',
      'error Patient.gender: The code is not in the required value set http://example.org/fhir/ValueSet/binary-gender',
    ]);
    expect(problems({ ...goodPatient, name: [{ family: 'A'.repeat(21) }] }, 'my-patient')).toEqual([
      'error Patient.name[0].family: Value is longer than 20 characters',
    ]);
  });

  it('slices by value, with the slice cardinality and fixed values inside the slice', () => {
    const noMrn = { ...goodPatient, identifier: [{ system: 'http://other.example.org', value: 'x' }] };
    expect(problems(noMrn, 'my-patient')).toEqual([
      'error Patient.identifier: Slice Patient.identifier:mrn: minimum required = 1, but only found 0',
    ]);
    const twoMrns = { ...goodPatient, identifier: [{ system: MRN, value: '1' }, { system: MRN }] };
    expect(problems(twoMrns, 'my-patient')).toEqual([
      'error Patient.identifier[1]: Slice Patient.identifier:mrn: maximum allowed = 1, but found 2',
      'error Patient.identifier[1].value: Patient.identifier:mrn.value: minimum required = 1, but only found 0',
    ]);
  });

  it('validates extensions against the definitions the profile names (url fixed, value type)', () => {
    const wrongValue = { ...goodPatient, extension: [{ url: BASE + 'race', valueString: 'white' }] };
    const noValue = {
      ...goodPatient,
      extension: [{ url: BASE + 'race', extension: [{ url: 'x', valueString: 'y' }] }],
    };
    expect(problems(noValue, 'my-patient')).toEqual([
      'error Patient.extension[0].value[x]: Extension.value[x]: minimum required = 1, but only found 0',
    ]);
    expect(problems(wrongValue, 'my-patient')).toEqual([
      'error Patient.extension[0].valueString: Type string is not allowed here: Coding',
    ]);
  });

  it('checks reference targets, also through target profiles', () => {
    expect(problems({ ...goodPatient, generalPractitioner: [{ reference: 'Patient/2' }] }, 'my-patient')).toEqual([
      'error Patient.generalPractitioner[0].reference: The reference must point to Practitioner, not Patient',
    ]);
    expect(problems({ ...goodVitals, subject: { reference: 'Group/g' } }, 'vitals')).toEqual([
      'error Observation.subject.reference: The reference must point to Patient, not Group',
    ]);
  });

  it('slices by pattern: missing slice, closed slicing and order', () => {
    const noCategory = { ...goodVitals, category: [{ text: 'other' }] };
    expect(problems(noCategory, 'vitals')).toEqual([
      'error Observation.category: Slice Observation.category:VSCat: minimum required = 1, but only found 0',
    ]);
    const [systolic, diastolic] = goodVitals.component;
    const extra = { code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] } };
    expect(problems({ ...goodVitals, component: [diastolic, systolic, extra] }, 'vitals')).toEqual([
      'error Observation.component[1]: Slice systolic is out of order: the slices of Observation.component are ordered',
      'error Observation.component[2]: This element does not match any known slice of Observation.component and slicing is closed',
    ]);
  });

  it('restricts types and checks fixed values inside the value', () => {
    expect(problems({ ...goodVitals, valueString: 'high' }, 'vitals')).toEqual([
      'error Observation.valueString: Type string is not allowed here: Quantity',
    ]);
    expect(problems({ ...goodVitals, valueQuantity: { value: 1, system: 'http://other' } }, 'vitals')).toEqual([
      'error Observation.valueQuantity.system: Value must be exactly "http://unitsofmeasure.org" (fixedUri)',
    ]);
  });

  it('a profile derived from a profile keeps its base constraints and adds its own', () => {
    const { effectiveDateTime: _e, ...noDate } = goodVitals;
    expect(problems({ ...noDate, status: 'preliminary', category: [{ text: 'x' }] }, 'strict-vitals')).toEqual([
      'error Observation.category: Slice Observation.category:VSCat: minimum required = 1, but only found 0',
      'error Observation.effective[x]: Observation.effective[x]: minimum required = 1, but only found 0',
      'error Observation.status: Value must be exactly "final" (fixedCode)',
    ]);
    expect(validator.snapshot(BASE + 'strict-vitals')?.map((e) => e.id)).toContain(
      'Observation.component:systolic.code',
    );
  });

  it('slices by type and by exists, closed and openAtEnd', () => {
    const base = { resourceType: 'Observation', status: 'final', code: { text: 'x' } };
    expect(problems({ ...base, valueString: 'ok' }, 'typed')).toEqual([]);
    expect(problems({ ...base, valueString: 'too long' }, 'typed')).toEqual([
      'error Observation.valueString: Value is longer than 5 characters',
    ]);
    expect(problems({ ...base, valueBoolean: true }, 'typed')).toEqual([
      'error Observation.valueBoolean: This element does not match any known slice of Observation.value[x] and slicing is closed',
    ]);
    const signed = { text: 'a', authorString: 'Dr A' };
    expect(problems({ ...base, note: [signed, { text: 'b' }] }, 'typed')).toEqual([]);
    expect(problems({ ...base, note: [{ text: 'b' }, signed] }, 'typed')).toEqual([
      'error Observation.note[0]: Values outside the slices of Observation.note must come after all the sliced values (openAtEnd)',
    ]);
  });

  it('slices by profile', () => {
    const bundle = { resourceType: 'Bundle', type: 'collection', entry: [{ resource: goodPatient }] };
    expect(problems(bundle, 'patient-bundle')).toEqual([]);
    const other = { resourceType: 'Patient', name: [{ family: 'X' }] };
    expect(problems({ ...bundle, entry: [{ resource: other }] }, 'patient-bundle')).toEqual([
      'error Bundle.entry[0]: This element does not match any known slice of Bundle.entry and slicing is closed',
      'error Bundle.entry: Slice Bundle.entry:patient: minimum required = 1, but only found 0',
    ]);
  });

  it('reports an unknown profile and a profile of another type', () => {
    expect(problems(goodPatient, 'nope')).toEqual([`error Patient: Profile ${BASE}nope is not known to this server`]);
    expect(problems(goodPatient, 'vitals')).toEqual([
      `error Patient: Profile ${BASE}vitals is for Observation resources, not Patient`,
    ]);
  });

  it('uses a snapshot when the definition has one', () => {
    const withSnapshot: ProfileDefinition = {
      ...profile('snap', 'Patient', []),
      snapshot: {
        element: [
          { id: 'Patient', path: 'Patient', min: 0, max: '*' },
          {
            id: 'Patient.active',
            path: 'Patient.active',
            min: 1,
            max: '1',
            type: [{ code: 'boolean' }],
            fixedBoolean: true,
          },
        ],
      },
    };
    const v = new ProfileValidator({ schema, resolve: (url) => (url === withSnapshot.url ? withSnapshot : undefined) });
    expect(v.validate({ resourceType: 'Patient', active: true }, withSnapshot.url)).toEqual([]);
    expect(
      v.validate({ resourceType: 'Patient', active: false }, withSnapshot.url).map((i) => i.details?.text),
    ).toEqual(['Value must be exactly true (fixedBoolean)']);
  });

  it('checks the invariants a profile adds, on resources and on elements, not the base ones again', () => {
    const withInvariants = profile('invariants', 'Patient', [
      {
        id: 'Patient',
        path: 'Patient',
        constraint: [
          {
            key: 'pat-x1',
            severity: 'error',
            human: 'A name or a telecom',
            expression: 'name.exists() or telecom.exists()',
          },
          // A base invariant (dom-2) repeated by the profile is the structural validator's.
          { key: 'dom-2', severity: 'error', human: 'No nested contained', expression: 'false' },
        ],
      },
      {
        id: 'Patient.birthDate',
        path: 'Patient.birthDate',
        constraint: [
          { key: 'pat-x2', severity: 'warning', human: 'Precise to the day', expression: 'toString().length() = 10' },
        ],
      },
    ]);
    const v = new ProfileValidator({
      schema,
      resolve: (url) => (url === withInvariants.url ? withInvariants : undefined),
    });
    const texts = (resource: unknown) =>
      v.validate(resource, withInvariants.url).map((i) => `${i.severity} ${i.expression?.[0]}: ${i.details?.text}`);
    expect(texts({ resourceType: 'Patient', name: [{ family: 'X' }], birthDate: '1970-01-01' })).toEqual([]);
    expect(texts({ resourceType: 'Patient', birthDate: '1970' })).toEqual([
      'error Patient: Constraint failed: pat-x1: A name or a telecom',
      'warning Patient.birthDate: Constraint failed: pat-x2: Precise to the day',
    ]);
  });

  it('counts a primitive given by its extensions alone as present', () => {
    const { status: _status, ...rest } = goodVitals;
    const extended = { ...rest, _status: { extension: [{ url: 'http://example.org/why', valueString: 'x' }] } };
    expect(problems(extended, 'vitals')).toEqual([]);
  });
});
