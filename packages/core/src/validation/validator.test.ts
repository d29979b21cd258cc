import { getSchema } from '@hearth/definitions';
import { describe, expect, it } from 'vitest';
import { OperationOutcomeError } from '../outcome.js';
import type { ValidatorSchema } from './schema.js';
import { assertValidResource, createValidator, validateResource, validateResourceType } from './validator.js';

const schema: ValidatorSchema = getSchema();
const validator = createValidator(schema);

/** The issues as 'expression: text' lines, easy to compare. */
function problems(resource: unknown): string[] {
  return validator.validate(resource).map((i) => `${i.expression?.[0]}: ${i.details?.text}`);
}

function expectValid(resource: unknown): void {
  expect(problems(resource)).toEqual([]);
}

const observation = {
  resourceType: 'Observation',
  id: 'bp-1',
  meta: { versionId: '1', lastUpdated: '2024-01-02T03:04:05.678Z' },
  status: 'final',
  category: [
    { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] },
  ],
  // A local code: with LOINC 85354-9 the vital signs profile for blood pressure would apply
  // (required-profiles.test.ts); these tests are about the base definitions.
  code: { coding: [{ system: 'http://example.org/fhir/observation-codes', code: 'bp', display: 'Blood pressure' }] },
  subject: { reference: 'Patient/123', display: 'Jane' },
  effectiveDateTime: '2024-01-02T03:04:05Z',
  component: [
    {
      code: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] },
      valueQuantity: { value: 120, unit: 'mmHg', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
    },
    {
      code: { coding: [{ system: 'http://loinc.org', code: '8462-4' }] },
      valueQuantity: { value: 80, unit: 'mmHg', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
    },
  ],
};

describe('resource type', () => {
  it('accepts a valid resource', () => {
    expectValid(observation);
    expectValid({ resourceType: 'Patient' });
  });

  it('needs a known, concrete resourceType', () => {
    expect(problems({ id: 'x' })).toEqual(['Resource: Missing resourceType']);
    expect(problems({ resourceType: 'Patientt' })).toEqual(['Patientt: Unknown resource type "Patientt"']);
    expect(problems({ resourceType: 'DomainResource' })).toEqual([
      'DomainResource: Unknown resource type "DomainResource"',
    ]);
    expect(problems({ resourceType: 'HumanName' })).toEqual(['HumanName: Unknown resource type "HumanName"']);
    expect(problems({ resourceType: 'Patient.contact' })).toHaveLength(1);
    expect(problems([])).toEqual(['Resource: Expected a resource (a JSON object), got an array']);
    expect(problems(null)).toEqual(['Resource: Expected a resource (a JSON object), got null']);
  });

  it('checks the id format', () => {
    expect(problems({ resourceType: 'Patient', id: 'not valid!' })).toEqual(['Patient.id: Invalid id "not valid!"']);
    expect(problems({ resourceType: 'Patient', id: 'x'.repeat(65) })).toHaveLength(1);
    expectValid({ resourceType: 'Patient', id: 'A-1.b' });
  });
});

describe('elements', () => {
  it('rejects unknown elements, with their path', () => {
    expect(problems({ resourceType: 'Patient', foo: 1 })).toEqual(['Patient.foo: Unknown element "foo" in Patient']);
    expect(problems({ resourceType: 'Patient', name: [{ given: ['A'], nickname: 'B' }] })).toEqual([
      'Patient.name[0].nickname: Unknown element "nickname" in HumanName',
    ]);
    expect(problems({ resourceType: 'Patient', contact: [{ name: { family: 'X' }, foo: true }] })).toEqual([
      'Patient.contact[0].foo: Unknown element "foo" in Patient.contact',
    ]);
    expect(problems({ resourceType: 'Patient', name: [{ resourceType: 'HumanName' }] })).toEqual([
      'Patient.name[0].resourceType: Unknown element "resourceType" in HumanName',
    ]);
    expect(problems({ resourceType: 'Patient', __proto__x: 1, constructor: 1 })).toHaveLength(2);
  });

  it('reports a FHIRPath location for deep values', () => {
    expect(problems({ resourceType: 'Patient', name: [{ given: ['A'] }, { given: ['B', 7] }] })).toEqual([
      'Patient.name[1].given[1]: Expected a string for string, got 7',
    ]);
  });

  it('checks array and single cardinality', () => {
    expect(problems({ resourceType: 'Patient', name: { family: 'X' } })).toEqual([
      'Patient.name: Expected an array (max *)',
    ]);
    expect(problems({ resourceType: 'Patient', gender: ['male'] })).toEqual([
      'Patient.gender: Expected a single value, not an array (max 1)',
    ]);
    expect(problems({ resourceType: 'Patient', birthDate: '2000-01-01', active: [true, false] })).toHaveLength(1);
  });

  it('checks required elements', () => {
    expect(problems({ resourceType: 'Observation' })).toEqual([
      'Observation.status: Missing required element "status"',
      'Observation.code: Missing required element "code"',
    ]);
    expect(problems({ ...observation, component: [{ valueString: 'x' }] })).toEqual([
      'Observation.component[0].code: Missing required element "code"',
    ]);
    expect(problems({ resourceType: 'Bundle' })).toEqual(['Bundle.type: Missing required element "type"']);
  });

  it('counts a primitive given only by its extensions as present', () => {
    expectValid({
      ...observation,
      status: undefined,
      _status: {
        extension: [{ url: 'http://hl7.org/fhir/StructureDefinition/data-absent-reason', valueCode: 'unknown' }],
      },
    });
  });

  it('rejects nulls, empty objects, empty arrays and empty strings', () => {
    expect(problems({ resourceType: 'Patient', gender: null })).toEqual([
      'Patient.gender: Invalid null value: omit the element instead',
    ]);
    expect(problems({ resourceType: 'Patient', name: [] })).toEqual([
      'Patient.name: Empty array: omit the element instead',
    ]);
    expect(problems({ resourceType: 'Patient', name: [{}] })).toEqual([
      'Patient.name[0]: Empty object: an element has a value, children or extensions',
    ]);
    expect(problems({ resourceType: 'Patient', name: [null] })).toEqual([
      'Patient.name[0]: Invalid null value in array',
    ]);
    expect(problems({ resourceType: 'Patient', name: [{ family: '' }] })).toEqual([
      'Patient.name[0].family: Invalid empty string: a primitive is either absent or has a value',
    ]);
    expect(problems({ resourceType: 'Patient', name: [{ family: '  ' }] })).toEqual([
      'Patient.name[0].family: Invalid string: it has only whitespace',
    ]);
    expect(problems({ resourceType: 'Patient', name: ['Smith'] })).toEqual([
      'Patient.name[0]: Expected an object of type HumanName, got string',
    ]);
  });

  it('checks the primitive types of elements', () => {
    expect(problems({ resourceType: 'Patient', active: 'true' })).toEqual([
      'Patient.active: Expected a boolean (true or false), got "true"',
    ]);
    expect(problems({ resourceType: 'Patient', birthDate: '1970-13-01' })).toEqual([
      'Patient.birthDate: Invalid date "1970-13-01"',
    ]);
    expect(problems({ resourceType: 'Patient', multipleBirthInteger: 1.5 })).toEqual([
      'Patient.multipleBirthInteger: Invalid integer 1.5: expected a 32-bit integer',
    ]);
    expect(problems({ ...observation, issued: '2024-01-02' })).toEqual([
      'Observation.issued: Invalid instant "2024-01-02"',
    ]);
    expect(problems({ ...observation, valueQuantity: { value: '12' } })).toEqual([
      'Observation.valueQuantity.value: Expected a number for decimal, got "12"',
    ]);
    // Not a <div>: the type check says so; the narrative rules (txt-1) add that it is not XHTML at all.
    expect(problems({ resourceType: 'Patient', text: { status: 'generated', div: 'plain text' } })).toContain(
      'Patient.text.div: Invalid xhtml: expected a <div> element',
    );
  });
});

describe('choice types', () => {
  it('accepts exactly one typed name', () => {
    expectValid({ ...observation, valueString: 'x' });
    expect(problems({ ...observation, valueString: 'x', valueBoolean: true })).toEqual([
      'Observation.valueBoolean: Only one of valueString and valueBoolean is allowed (value[x])',
    ]);
    expect(problems({ ...observation, effectivePeriod: { start: '2024' } })).toEqual([
      'Observation.effectivePeriod: Only one of effectiveDateTime and effectivePeriod is allowed (effective[x])',
    ]);
  });

  it('rejects the [x] name and types the element does not allow', () => {
    expect(problems({ ...observation, 'value[x]': 'x' })).toEqual([
      'Observation.value[x]: Unknown element "value[x]" in Observation',
    ]);
    expect(problems({ ...observation, valueAddress: { city: 'X' } })).toEqual([
      'Observation.valueAddress: Unknown element "valueAddress" in Observation',
    ]);
    expect(problems({ ...observation, valuestring: 'x' })).toHaveLength(1);
  });

  it('checks a required choice', () => {
    expect(problems({ resourceType: 'Extension' })).toHaveLength(1);
    expect(problems({ resourceType: 'Patient', extension: [{ url: 'http://x' }] })).toEqual([
      'Patient.extension[0]: An extension needs a value or extensions (ext-1)',
    ]);
  });
});

describe('primitive extensions', () => {
  it('accepts _name with id and extensions beside or instead of the value', () => {
    expectValid({
      resourceType: 'Patient',
      birthDate: '1970-03-30',
      _birthDate: {
        id: 'bd',
        extension: [
          {
            url: 'http://hl7.org/fhir/StructureDefinition/patient-birthTime',
            valueDateTime: '1970-03-30T14:35:45-05:00',
          },
        ],
      },
    });
    expectValid({ resourceType: 'Patient', _gender: { extension: [{ url: 'http://x', valueString: 'y' }] } });
  });

  it('aligns arrays of values and extensions, nulls filling the gaps', () => {
    const ext = { extension: [{ url: 'http://x', valueCode: 'NB' }] };
    expectValid({ resourceType: 'Patient', name: [{ given: ['Ann', 'Marie'], _given: [null, ext] }] });
    expectValid({ resourceType: 'Patient', name: [{ given: ['Ann', null], _given: [null, ext] }] });
    expectValid({ resourceType: 'Patient', name: [{ _given: [ext] }] });
    expect(problems({ resourceType: 'Patient', name: [{ given: ['Ann', null], _given: [ext, null] }] })).toEqual([
      'Patient.name[0].given[1]: Invalid null value in array',
      'Patient.name[0]._given[1]: Both the value and its extension are null',
    ]);
    expect(problems({ resourceType: 'Patient', name: [{ given: ['Ann', 'B'], _given: [ext] }] })).toEqual([
      'Patient.name[0]._given: Expected 2 items, one per value',
    ]);
    expect(problems({ resourceType: 'Patient', name: [{ given: ['Ann'], _given: ext }] })).toEqual([
      'Patient.name[0]._given: Expected an array aligned with the values',
    ]);
  });

  it('validates the content of _name and refuses it for non-primitives', () => {
    expect(problems({ resourceType: 'Patient', _gender: { foo: 1 } })).toEqual([
      'Patient._gender.foo: Unknown element "foo" in code',
    ]);
    expect(problems({ resourceType: 'Patient', _gender: 'x' })).toEqual([
      'Patient._gender: Expected an object with id or extension, got string',
    ]);
    expect(problems({ resourceType: 'Patient', _name: [{ id: 'x' }] })).toEqual([
      'Patient._name: Unknown element "_name" in Patient',
    ]);
    expect(problems({ resourceType: 'Patient', _unknown: {} })).toEqual([
      'Patient._unknown: Unknown element "_unknown" in Patient',
    ]);
  });
});

describe('extensions', () => {
  it('needs a url, and validates the value by its type', () => {
    expect(problems({ resourceType: 'Patient', extension: [{ valueString: 'x' }] })).toEqual([
      'Patient.extension[0].url: Missing required element "url"',
    ]);
    expect(problems({ resourceType: 'Patient', extension: [{ url: 'http://x', valueDate: 'yesterday' }] })).toEqual([
      'Patient.extension[0].valueDate: Invalid date "yesterday"',
    ]);
    expect(problems({ resourceType: 'Patient', extension: [{ url: 'http://x', valueFoo: 1 }] })).toEqual([
      'Patient.extension[0].valueFoo: Unknown element "valueFoo" in Extension',
      'Patient.extension[0]: An extension needs a value or extensions (ext-1)',
    ]);
  });

  it('has a value or nested extensions, not both (ext-1)', () => {
    expectValid({
      resourceType: 'Patient',
      extension: [{ url: 'http://x', extension: [{ url: 'a', valueString: 'b' }] }],
    });
    // A modifier extension nobody defined cannot be ignored safely: refused (extensions.ts).
    expect(problems({ resourceType: 'Patient', modifierExtension: [{ url: 'http://y', valueBoolean: true }] })).toEqual(
      ['Patient.modifierExtension[0]: Unknown modifier extension http://y: it cannot be safely ignored'],
    );
    expect(
      problems({
        resourceType: 'Patient',
        extension: [{ url: 'http://x', valueString: 'v', extension: [{ url: 'a', valueString: 'b' }] }],
      }),
    ).toEqual(['Patient.extension[0]: An extension cannot have both a value and extensions (ext-1)']);
  });
});

describe('contained and nested resources', () => {
  it('validates contained resources by their own type', () => {
    expectValid({ ...observation, contained: [{ resourceType: 'Patient', id: 'p1' }], subject: { reference: '#p1' } });
    expect(
      problems({
        ...observation,
        contained: [{ resourceType: 'Patient', id: 'p1', foo: 1 }],
        subject: { reference: '#p1' },
      }),
    ).toEqual(['Observation.contained[0].foo: Unknown element "foo" in Patient']);
    expect(problems({ ...observation, contained: [{ id: 'p1' }] })).toContain(
      'Observation.contained[0]: Missing resourceType',
    );
    expect(problems({ ...observation, contained: [{ resourceType: 'Nope' }] })).toContain(
      'Observation.contained[0]: Unknown resource type "Nope"',
    );
  });

  it('does not allow contained resources inside contained resources (dom-2)', () => {
    const inner = {
      resourceType: 'Patient',
      id: 'p1',
      contained: [{ resourceType: 'Organization', id: 'o1', name: 'Clinic' }],
      managingOrganization: { reference: '#o1' },
    };
    // The structural check and the invariant (dom-2, evaluated on the container) both say so.
    const found = problems({ ...observation, contained: [inner], subject: { reference: '#p1' } });
    expect(found).toContain(
      'Observation.contained[0].contained: A contained resource cannot contain other resources (dom-2)',
    );
    expect(found).toContain(
      'Observation: Constraint failed: dom-2: If the resource is contained in another resource, it SHALL NOT contain nested Resources',
    );
  });

  it('validates resources in bundles and parameters', () => {
    const bundle = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          fullUrl: 'urn:uuid:61ebe359-bfdc-4613-8bf2-c5e300945f0a',
          resource: { resourceType: 'Patient', gender: 'male' },
          request: { method: 'POST', url: 'Patient' },
        },
        { resource: { resourceType: 'Patient', gender: 'boy' }, request: { method: 'POST', url: 'Patient' } },
      ],
    };
    expect(problems(bundle)).toEqual([
      'Bundle.entry[1].resource.gender: Value "boy" is not in the required value set http://hl7.org/fhir/ValueSet/administrative-gender',
    ]);
    expect(
      problems({ resourceType: 'Parameters', parameter: [{ name: 'r', resource: { resourceType: 'Patient', x: 1 } }] }),
    ).toEqual(['Parameters.parameter[0].resource.x: Unknown element "x" in Patient']);
  });

  it('checks the type of an element typed as one resource type', () => {
    const job = {
      resourceType: 'AsyncJob',
      status: 'completed',
      requestTime: '2024-01-01T00:00:00Z',
      request: 'http://x/$export',
    };
    expectValid({ ...job, output: { resourceType: 'Parameters', parameter: [{ name: 'a', valueString: 'b' }] } });
    expect(problems({ ...job, output: { resourceType: 'Patient' } })).toEqual([
      'AsyncJob.output: Expected a Parameters resource, got Patient',
    ]);
  });
});

describe('required bindings', () => {
  it('checks codes of required bindings', () => {
    expect(problems({ resourceType: 'Patient', gender: 'M' })).toEqual([
      'Patient.gender: Value "M" is not in the required value set http://hl7.org/fhir/ValueSet/administrative-gender',
    ]);
    expect(problems({ ...observation, status: 'done' })).toEqual([
      'Observation.status: Value "done" is not in the required value set http://hl7.org/fhir/ValueSet/observation-status',
    ]);
    expect(problems({ resourceType: 'Bundle', type: 'bag' })).toHaveLength(1);
    expect(validator.validate({ resourceType: 'Patient', gender: 'M' })[0].code).toBe('code-invalid');
  });

  it('leaves codes of other bindings and of non-enumerable value sets alone', () => {
    expectValid({ ...observation, category: [{ coding: [{ system: 'http://example.org', code: 'anything' }] }] });
    expectValid({ resourceType: 'Binary', contentType: 'application/x-anything' });
  });

  it('checks CodeableConcepts with a required binding', () => {
    const condition = { resourceType: 'Condition', subject: { reference: 'Patient/1' } };
    const system = 'http://terminology.hl7.org/CodeSystem/condition-clinical';
    expectValid({ ...condition, clinicalStatus: { coding: [{ system, code: 'active' }] } });
    expectValid({
      ...condition,
      clinicalStatus: {
        coding: [
          { system: 'http://other', code: 'x' },
          { system, code: 'resolved' },
        ],
      },
    });
    expectValid({ ...condition, clinicalStatus: { text: 'active' } });
    expect(problems({ ...condition, clinicalStatus: { coding: [{ system, code: 'healed' }] } })).toEqual([
      'Condition.clinicalStatus: No coding is in the required value set http://hl7.org/fhir/ValueSet/condition-clinical',
    ]);
  });
});

describe('reference targets', () => {
  it('accepts references to the types the element allows', () => {
    for (const reference of [
      'Patient/123',
      'Group/g1/_history/2',
      'https://other.example.org/fhir/Patient/123',
      'Patient?identifier=http://x|1',
      'urn:uuid:61ebe359-bfdc-4613-8bf2-c5e300945f0a',
    ]) {
      expectValid({ ...observation, subject: { reference } });
    }
    // A local reference needs the contained resource it names (ref-1).
    expectValid({ ...observation, contained: [{ resourceType: 'Patient', id: 'p1' }], subject: { reference: '#p1' } });
    expectValid({ ...observation, subject: { identifier: { value: 'x' } } });
    expectValid({
      resourceType: 'Provenance',
      target: [{ reference: 'Anything/1' }],
      recorded: '2024-01-01T00:00:00Z',
      agent: [{ who: { reference: 'Practitioner/1' } }],
    });
  });

  it('lets AuditEvents name bots and clients as agents', () => {
    const audit = {
      resourceType: 'AuditEvent',
      type: { system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110100' },
      recorded: '2024-01-01T00:00:00Z',
      agent: [{ who: { reference: 'Bot/1' }, requestor: false }],
      source: { observer: { reference: 'Subscription/1' } },
    };
    expectValid(audit);
    expect(problems({ ...audit, agent: [{ who: { reference: 'Project/1' }, requestor: false }] })).toHaveLength(1);
  });

  it('rejects references to other types', () => {
    expect(problems({ ...observation, subject: { reference: 'Medication/1' } })).toEqual([
      'Observation.subject.reference: Invalid reference target Medication: expected Patient, Group, Device, Location',
    ]);
    expect(problems({ ...observation, subject: { reference: 'Practitioner?identifier=x' } })).toHaveLength(1);
    expect(
      problems({
        resourceType: 'ProjectMembership',
        project: { reference: 'Patient/1' },
        user: { reference: 'User/1' },
        profile: { reference: 'Patient/1' },
      }),
    ).toEqual(['ProjectMembership.project.reference: Invalid reference target Patient: expected Project']);
  });
});

describe('platform resources', () => {
  it('validates Hearth resource types with platform meta elements', () => {
    expectValid({
      resourceType: 'Project',
      id: '0d6e4a5d-2b8c-4e48-9a3f-5f3c1f0d7f11',
      meta: {
        project: '0d6e4a5d-2b8c-4e48-9a3f-5f3c1f0d7f11',
        author: { reference: 'Practitioner/1' },
        compartment: [{ reference: 'Project/0d6e4a5d-2b8c-4e48-9a3f-5f3c1f0d7f11' }],
        account: { reference: 'Organization/1' },
      },
      name: 'Test',
      strictMode: true,
      features: ['bots'],
      setting: [{ name: 'theme', valueString: 'dark' }],
      secret: [
        { name: 'apiKey', valueString: 's3cret' },
        { name: 'flag', valueBoolean: true },
      ],
      site: [{ name: 'Main', domain: ['example.org'] }],
      link: [{ project: { reference: 'Project/2' } }],
    });
    expectValid({
      resourceType: 'ProjectMembership',
      project: { reference: 'Project/1' },
      user: { reference: 'User/1' },
      profile: { reference: 'Practitioner/1' },
      access: [
        {
          policy: { reference: 'AccessPolicy/1' },
          parameter: [{ name: 'org', valueReference: { reference: 'Organization/1' } }],
        },
      ],
      admin: true,
    });
    expectValid({
      resourceType: 'ClientApplication',
      name: 'App',
      identityProvider: { authorizeUrl: 'https://idp/authorize', tokenUrl: 'https://idp/token', usePkce: true },
    });
    expectValid({
      resourceType: 'Agent',
      name: 'A',
      status: 'active',
      channel: [{ name: 'hl7', endpoint: { reference: 'Endpoint/1' }, targetReference: { reference: 'Bot/1' } }],
    });
  });

  it('rejects what the platform definitions do not allow', () => {
    expect(problems({ resourceType: 'Project', secret: [{ name: 'k' }] })).toEqual([
      'Project.secret[0].valueString: Missing required element "value[x]"',
    ]);
    expect(problems({ resourceType: 'AccessPolicy', ipAccessRule: [{ value: '10.0.0.0/8', action: 'deny' }] })).toEqual(
      [
        'AccessPolicy.ipAccessRule[0].action: Value "deny" is not in the required value set https://hearth.dev/fhir/ValueSet/ip-access-rule-action',
      ],
    );
    expect(problems({ resourceType: 'User', firstName: 'A' })).toEqual([
      'User.lastName: Missing required element "lastName"',
    ]);
    expect(problems({ resourceType: 'Patient', meta: { onBehalfOf: { reference: 'Patient/1' } } })).toEqual([
      'Patient.meta.onBehalfOf: Unknown element "onBehalfOf" in Meta',
    ]);
    expect(problems({ resourceType: 'IdentityProvider', clientId: 'x' })).toEqual([
      'IdentityProvider: Unknown resource type "IdentityProvider"',
    ]);
  });
});

describe('API', () => {
  it('validateResource caches one validator per schema', () => {
    expect(validateResource({ resourceType: 'Patient', foo: 1 }, { schema })).toHaveLength(1);
    expect(validateResource({ resourceType: 'Patient' }, { schema })).toEqual([]);
  });

  it('assertValidResource throws a 400 OperationOutcome with every issue', () => {
    expect(() => assertValidResource({ resourceType: 'Patient' }, { schema })).not.toThrow();
    try {
      assertValidResource({ resourceType: 'Observation', foo: 1 }, { schema });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(OperationOutcomeError);
      const e = err as OperationOutcomeError;
      expect(e.status).toBe(400);
      expect(e.outcome.issue.map((i) => i.expression?.[0])).toEqual([
        'Observation.foo',
        'Observation.status',
        'Observation.code',
      ]);
      expect(e.outcome.issue.every((i) => i.severity === 'error')).toBe(true);
    }
  });

  it('validateResourceType checks the name, and that the schema knows it', () => {
    expect(() => validateResourceType('Patient', { schema })).not.toThrow();
    expect(() => validateResourceType('Project', { schema })).not.toThrow();
    expect(() => validateResourceType('Foo', { schema })).toThrow('Unknown resource type "Foo"');
    expect(() => validateResourceType('Resource', { schema })).toThrow(OperationOutcomeError);
    expect(() => validateResourceType('Foo')).not.toThrow();
    expect(() => validateResourceType('patient')).toThrow(OperationOutcomeError);
    expect(() => validateResourceType('Patient;drop')).toThrow(OperationOutcomeError);
    expect(() => validateResourceType('')).toThrow(OperationOutcomeError);
  });

  it('works with any schema given as data', () => {
    const tiny: ValidatorSchema = {
      types: {
        string: { name: 'string', kind: 'primitive-type', elements: {} },
        code: { name: 'code', kind: 'primitive-type', elements: {} },
        Thing: {
          name: 'Thing',
          kind: 'resource',
          elements: {
            tag: { path: 'Thing.tag', min: 1, max: '2', isArray: true, type: [{ code: 'string' }] },
            kind: {
              path: 'Thing.kind',
              min: 0,
              max: '1',
              isArray: false,
              type: [{ code: 'code' }],
              binding: { strength: 'required', valueSet: 'urn:kinds' },
            },
          },
        },
      },
      valueSets: { 'urn:kinds': ['urn:sys|a', 'urn:sys|b'] },
    };
    const v = createValidator(tiny);
    expect(v.validate({ resourceType: 'Thing', tag: ['x'], kind: 'a' })).toEqual([]);
    expect(v.validate({ resourceType: 'Thing', tag: ['x', 'y', 'z'], kind: 'c' }).map((i) => i.details?.text)).toEqual([
      'Too many values: 3, at most 2',
      'Value "c" is not in the required value set urn:kinds',
    ]);
    expect(v.isResourceType('Thing')).toBe(true);
    expect(v.isResourceType('Patient')).toBe(false);
  });
});

describe('narrative hyperlinks and composite search parameters', () => {
  const div = (body: string) => `<div xmlns="http://www.w3.org/1999/xhtml">${body}</div>`;

  it("resolves a narrative's #links to its anchors, another narrative's, or a resource id", () => {
    expectValid({
      resourceType: 'Patient',
      text: { status: 'generated', div: div('<p id="top">Jane</p><a href="#top">up</a> <a href="#med">med</a>') },
      contained: [{ resourceType: 'Medication', id: 'med' }],
      extension: [{ url: 'http://example.org/m', valueReference: { reference: '#med' } }],
    });
    expectValid({
      resourceType: 'Bundle',
      type: 'collection',
      entry: [
        {
          fullUrl: 'urn:uuid:2b9a8d3c-7c55-4a79-9b0e-2f1d3c4b5a60',
          resource: { resourceType: 'Patient', text: { status: 'generated', div: div('<a href="#n1">note</a>') } },
        },
        {
          fullUrl: 'urn:uuid:8f2d7a4e-1b3c-4d5e-9f60-718293a4b5c6',
          resource: {
            resourceType: 'Basic',
            code: { text: 'x' },
            text: { status: 'generated', div: div('<a name="n1">N</a>') },
          },
        },
      ],
    });
  });

  it('warns about a #link that points to nothing, naming the narrative', () => {
    const issues = validator.validate({
      resourceType: 'Patient',
      text: { status: 'generated', div: div('<p>See <a href="#Organization_X">above</a></p>') },
    });
    expect(issues.map((i) => [i.severity, i.expression?.[0], i.details?.text])).toEqual([
      ['warning', 'Patient.text.div', "The narrative's hyperlink '#Organization_X' points to no anchor or resource id"],
    ]);
  });

  it('refuses a composite SearchParameter with fewer than two components', () => {
    const parameter = {
      resourceType: 'SearchParameter',
      url: 'http://example.org/SearchParameter/code-value',
      name: 'CodeValue',
      status: 'active',
      description: 'code and value',
      code: 'code-value',
      base: ['Observation'],
      type: 'composite',
      expression: 'Observation',
    };
    expect(problems(parameter)).toEqual([
      'SearchParameter: A composite SearchParameter defines two or more components (it has 0)',
    ]);
    const component = (definition: string) => ({ definition, expression: 'code' });
    expect(
      problems({ ...parameter, component: [component('http://hl7.org/fhir/SearchParameter/clinical-code')] }),
    ).toEqual(['SearchParameter.component: A composite SearchParameter defines two or more components (it has 1)']);
    expectValid({
      ...parameter,
      component: [
        component('http://hl7.org/fhir/SearchParameter/clinical-code'),
        component('http://hl7.org/fhir/SearchParameter/Observation-value-quantity'),
      ],
    });
  });
});
