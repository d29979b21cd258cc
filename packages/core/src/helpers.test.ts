import { describe, expect, it } from 'vitest';
import type { HumanName, Organization, Patient } from '@hearth/fhir-types';
import {
  createReference,
  getReferenceString,
  getReferenceType,
  isReference,
  isResource,
  parseReference,
  resolveId,
} from './references.js';
import { formatFamilyName, formatGivenName, formatHumanName, selectHumanName } from './names.js';
import { calculateAge, calculateAgeString, formatDate, formatDateTime, formatPeriod, formatTime } from './dates.js';
import {
  formatAddress,
  formatCodeableConcept,
  formatCoding,
  formatQuantity,
  formatRange,
  getDisplayString,
} from './display.js';
import { formatIdentifier, getIdentifier, setIdentifier } from './identifiers.js';
import { getExtension, getExtensionValue, setExtension } from './extensions.js';
import { deepClone, deepEquals, isEmpty, isObject, isPopulated, stableStringify } from './objects.js';

const ada: HumanName = {
  use: 'official',
  prefix: ['Dr.'],
  given: ['Ada', 'King'],
  family: 'Lovelace',
  suffix: ['PhD'],
};
const patient: Patient = { resourceType: 'Patient', id: 'p1', name: [ada] };

describe('references', () => {
  it('makes reference strings and references', () => {
    expect(getReferenceString(patient)).toBe('Patient/p1');
    expect(getReferenceString({ reference: 'Organization/o1' })).toBe('Organization/o1');
    expect(getReferenceString({ resourceType: 'Patient' })).toBe('');
    expect(createReference(patient)).toEqual({ reference: 'Patient/p1', display: 'Dr. Ada King Lovelace PhD' });
    const org: Organization = { resourceType: 'Organization', id: 'o1', name: 'Acme' };
    expect(createReference(org)).toEqual({ reference: 'Organization/o1', display: 'Acme' });
    expect(createReference({ resourceType: 'Basic', id: 'b' })).toEqual({ reference: 'Basic/b' });
  });

  it('parses relative, versioned and absolute references', () => {
    expect(parseReference('Patient/p1')).toEqual({ resourceType: 'Patient', id: 'p1' });
    expect(parseReference({ reference: 'Patient/p1/_history/3' })).toEqual({
      resourceType: 'Patient',
      id: 'p1',
      versionId: '3',
    });
    expect(parseReference('https://x.org/fhir/R4/Observation/o-1')).toEqual({ resourceType: 'Observation', id: 'o-1' });
    expect(parseReference('#contained')).toBeUndefined();
    expect(parseReference('urn:uuid:1234')).toBeUndefined();
    expect(parseReference(undefined)).toBeUndefined();
    expect(resolveId({ reference: 'Patient/p1' })).toBe('p1');
    expect(getReferenceType({ type: 'Device', identifier: { value: 'x' } })).toBe('Device');
  });

  it('tells resources and references apart', () => {
    expect(isResource(patient)).toBe(true);
    expect(isResource({ reference: 'Patient/1' })).toBe(false);
    expect(isReference({ reference: 'Patient/1' })).toBe(true);
    expect(isReference(patient)).toBe(false);
    expect(isReference(null)).toBe(false);
  });
});

describe('names', () => {
  it('formats whole names, given and family names', () => {
    expect(formatHumanName(ada)).toBe('Dr. Ada King Lovelace PhD');
    expect(formatHumanName(ada, { prefix: false, suffix: false, use: true })).toBe('Ada King Lovelace (official)');
    expect(formatHumanName({ text: 'Ada L.', family: 'Lovelace' })).toBe('Ada L.');
    expect(formatHumanName({ text: 'Ada L.', family: 'Lovelace' }, { preferText: false })).toBe('Lovelace');
    expect(formatHumanName(undefined)).toBe('');
    expect(formatGivenName(ada)).toBe('Ada King');
    expect(formatFamilyName(ada)).toBe('Lovelace');
    expect(formatFamilyName({})).toBe('');
  });

  it('selects the official current name', () => {
    const names: HumanName[] = [
      { use: 'nickname', given: ['Addie'] },
      { use: 'official', family: 'Byron', period: { end: '1835-07-08' } },
      { use: 'official', family: 'Lovelace' },
    ];
    expect(selectHumanName(names)?.family).toBe('Lovelace');
    expect(selectHumanName([{ use: 'old', family: 'X' }])?.family).toBe('X');
    expect(selectHumanName([])).toBeUndefined();
  });
});

describe('dates', () => {
  it('formats full and partial dates without shifting them by time zone', () => {
    expect(formatDate('2024-05-17', 'en-US')).toBe('5/17/2024');
    expect(formatDate('2024-05-17', 'en-US', { dateStyle: 'medium' })).toBe('May 17, 2024');
    expect(formatDate('2024-01-01', 'en-US', { dateStyle: 'long' })).toBe('January 1, 2024');
    expect(formatDate('2024-05', 'en-US')).toBe('May 2024');
    expect(formatDate('2024')).toBe('2024');
    expect(formatDate('2024-05-17T23:30:00-05:00', 'en-US')).toBe('5/17/2024');
    expect(formatDate('not a date')).toBe('');
    expect(formatDate(undefined)).toBe('');
  });

  it('formats date-times and times', () => {
    expect(formatDateTime('2024-05-17T14:30:00Z', 'en-US', { timeZone: 'UTC' })).toBe('5/17/2024, 2:30:00 PM');
    expect(
      formatDateTime('2024-05-17T14:30:00+02:00', 'en-GB', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'short' }),
    ).toBe('17/05/2024, 12:30');
    expect(formatDateTime('2024-05-17', 'en-US')).toBe('5/17/2024');
    expect(formatDateTime('garbage')).toBe('');
    expect(formatTime('14:30:00', 'en-US')).toBe('2:30 PM');
    expect(formatTime('9:30')).toBe('');
    expect(formatPeriod({ start: '2024-01-01', end: '2024-02-01' }, 'en-US')).toBe('1/1/2024 – 2/1/2024');
    expect(formatPeriod({ start: '2024-01-01' }, 'en-US')).toBe('1/1/2024 –');
    expect(formatPeriod(undefined)).toBe('');
  });

  it('calculates calendar ages', () => {
    expect(calculateAge('2000-01-31', '2000-03-01')).toEqual({ years: 0, months: 1, days: 1 });
    expect(calculateAge('1990-05-17', '2024-05-16')).toEqual({ years: 33, months: 11, days: 29 });
    expect(calculateAge('1990-05-17', '2024-05-17')).toEqual({ years: 34, months: 0, days: 0 });
    expect(calculateAge('2000-02-29', '2001-02-28')).toEqual({ years: 1, months: 0, days: 0 });
    expect(calculateAge('2000-01-31', '2000-02-28')).toEqual({ years: 0, months: 0, days: 28 });
    expect(calculateAge('2024-01-01', '2023-12-31')).toBeUndefined();
    expect(calculateAge('nope', '2023-12-31')).toBeUndefined();
    expect(calculateAge('1990', '2024-05-17')).toEqual({ years: 34, months: 4, days: 16 });
  });

  it('writes HL7 age strings', () => {
    expect(calculateAgeString('1990-05-17', '2024-05-17')).toBe('034Y');
    expect(calculateAgeString('2023-01-10', '2024-07-10')).toBe('018M');
    expect(calculateAgeString('2024-05-01', '2024-05-13')).toBe('012D');
    expect(calculateAgeString('x')).toBeUndefined();
  });
});

describe('display', () => {
  it('formats codings, concepts, quantities, ranges and addresses', () => {
    expect(formatCoding({ code: 'kg' })).toBe('kg');
    expect(formatCoding({ code: '29463-7', display: 'Body weight' }, true)).toBe('Body weight (29463-7)');
    expect(formatCodeableConcept({ text: 'Weight', coding: [{ display: 'x' }] })).toBe('Weight');
    expect(formatCodeableConcept({ coding: [{ display: 'A' }, { code: 'b' }] })).toBe('A, b');
    expect(formatQuantity({ value: 72.456, unit: 'kg' }, 1)).toBe('72.5 kg');
    expect(formatQuantity({ value: 5, unit: '%', comparator: '<' })).toBe('< 5%');
    expect(formatQuantity(undefined)).toBe('');
    expect(formatRange({ low: { value: 5, unit: 'mg' }, high: { value: 10, unit: 'mg' } })).toBe('5 - 10 mg');
    expect(formatRange({ low: { value: 5, unit: 'mg' } })).toBe('>= 5 mg');
    expect(formatRange({ high: { value: 10, unit: 'mg' } })).toBe('<= 10 mg');
    expect(
      formatAddress({
        line: ['1 Main St', 'Apt 2'],
        city: 'Springfield',
        state: 'IL',
        postalCode: '62701',
        country: 'US',
      }),
    ).toBe('1 Main St, Apt 2, Springfield, IL 62701, US');
    expect(formatAddress({ text: 'Somewhere', use: 'home' }, { use: true })).toBe('Somewhere (home)');
  });

  it('names resources of every kind', () => {
    expect(getDisplayString(patient)).toBe('Dr. Ada King Lovelace PhD');
    expect(getDisplayString({ resourceType: 'Organization', id: 'o', name: 'Acme' })).toBe('Acme');
    expect(getDisplayString({ resourceType: 'User', id: 'u', firstName: 'A', lastName: 'B' })).toBe('A B');
    expect(getDisplayString({ resourceType: 'User', id: 'u', email: 'a@b.c' })).toBe('a@b.c');
    expect(
      getDisplayString({ resourceType: 'Device', id: 'd', deviceName: [{ name: 'Pump', type: 'model-name' }] }),
    ).toBe('Pump');
    expect(getDisplayString({ resourceType: 'Questionnaire', id: 'q', status: 'active', title: 'Intake' })).toBe(
      'Intake',
    );
    expect(
      getDisplayString({
        resourceType: 'Observation',
        id: 'o',
        status: 'final',
        code: { coding: [{ display: 'BP' }] },
      }),
    ).toBe('BP');
    expect(
      getDisplayString({ resourceType: 'Subscription', id: 's', status: 'active', reason: 'Labs', criteria: 'Task' }),
    ).toBe('Labs');
    expect(
      getDisplayString({ resourceType: 'Subscription', id: 's', status: 'active', reason: '', criteria: 'Task' }),
    ).toBe('Task');
    expect(getDisplayString({ resourceType: 'Basic', id: 'b1' })).toBe('Basic/b1');
    expect(getDisplayString({ resourceType: 'Patient', id: 'p2', name: [] })).toBe('Patient/p2');
    expect(getDisplayString(undefined)).toBe('');
  });
});

describe('identifiers and extensions', () => {
  it('reads, sets and formats identifiers', () => {
    const p: Patient = { resourceType: 'Patient', identifier: [{ system: 'mrn', value: '1' }] };
    expect(getIdentifier(p, 'mrn')).toBe('1');
    expect(getIdentifier(p, 'ssn')).toBeUndefined();
    setIdentifier(p, 'mrn', '2');
    setIdentifier(p, 'ssn', '3');
    expect(p.identifier).toEqual([
      { system: 'mrn', value: '2' },
      { system: 'ssn', value: '3' },
    ]);
    expect(getIdentifier({ identifier: { system: 's', value: 'v' } }, 's')).toBe('v');
    expect(formatIdentifier({ system: 'mrn', value: '2' })).toBe('mrn|2');
    expect(formatIdentifier({ value: '2' })).toBe('2');
  });

  it('reads simple and nested extension values', () => {
    const p: Patient = {
      resourceType: 'Patient',
      extension: [
        { url: 'http://x/birthsex', valueCode: 'F' },
        {
          url: 'http://x/race',
          extension: [
            { url: 'text', valueString: 'Example' },
            { url: 'flag', valueBoolean: false },
          ],
        },
      ],
    };
    expect(getExtensionValue(p, 'http://x/birthsex')).toBe('F');
    expect(getExtensionValue(p, 'http://x/race', 'text')).toBe('Example');
    expect(getExtensionValue(p, 'http://x/race', 'flag')).toBe(false);
    expect(getExtensionValue(p, 'http://x/none')).toBeUndefined();
    expect(getExtension(p, 'http://x/race')?.extension).toHaveLength(2);
    setExtension(p, { url: 'http://x/birthsex', valueCode: 'M' });
    expect(getExtensionValue(p, 'http://x/birthsex')).toBe('M');
    expect(p.extension).toHaveLength(2);
  });
});

describe('objects', () => {
  it('compares JSON values deeply, ignoring undefined keys', () => {
    expect(deepEquals({ a: [1, { b: 2 }], c: undefined }, { a: [1, { b: 2 }] })).toBe(true);
    expect(deepEquals({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(deepEquals({ a: 1 }, { a: '1' })).toBe(false);
    expect(deepEquals(null, undefined)).toBe(false);
    expect(deepEquals([], {})).toBe(false);
  });

  it('can ignore server-maintained meta', () => {
    const a = { resourceType: 'Patient', id: '1', meta: { versionId: '1', lastUpdated: 'x' }, active: true };
    const b = { resourceType: 'Patient', id: '1', meta: { versionId: '2', lastUpdated: 'y' }, active: true };
    expect(deepEquals(a, b)).toBe(false);
    expect(deepEquals(a, b, { ignoreMeta: true })).toBe(true);
    expect(deepEquals(a, { ...b, meta: undefined }, { ignoreMeta: true })).toBe(true);
    expect(deepEquals(a, { ...b, meta: { tag: [{ code: 't' }] } }, { ignoreMeta: true })).toBe(false);
  });

  it('clones deeply', () => {
    const original = { a: { b: [1, { c: 2 }] } };
    const copy = deepClone(original);
    expect(copy).toEqual(original);
    expect(copy.a.b).not.toBe(original.a.b);
    expect(deepClone(undefined)).toBeUndefined();
  });

  it('knows empty values and sorts keys', () => {
    expect([undefined, null, '', [], {}, { a: undefined }].map(isEmpty)).toEqual([true, true, true, true, true, true]);
    expect([0, false, 'x', [0], { a: 1 }].map(isEmpty)).toEqual([false, false, false, false, false]);
    expect(isPopulated('x')).toBe(true);
    expect(isObject([])).toBe(false);
    expect(stableStringify({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });
});
