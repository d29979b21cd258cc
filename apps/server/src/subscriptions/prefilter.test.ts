import { describe, expect, it } from 'vitest';
import type { SearchParamType } from '@hearth/core';
import { criteriaNeedles, mayMatch } from './prefilter.js';

const types: Record<string, SearchParamType> = {
  code: 'token',
  identifier: 'token',
  subject: 'reference',
  url: 'uri',
  name: 'string',
  date: 'date',
};
const typeOf = (_t: string, code: string): SearchParamType | undefined => types[code];
const text = (r: object): string => JSON.stringify(r).toLowerCase();

const obs = {
  resourceType: 'Observation',
  code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
  subject: { reference: 'Patient/abc-123' },
  identifier: [{ system: 'urn:x', value: 'ID-9' }],
};

describe('criteria pre-test', () => {
  it('keeps resources whose token, reference and uri values appear', () => {
    expect(mayMatch(criteriaNeedles('Observation', 'code=http://loinc.org|8867-4', typeOf), text(obs))).toBe(true);
    expect(mayMatch(criteriaNeedles('Observation', 'code=1234-5,8867-4', typeOf), text(obs))).toBe(true);
    expect(mayMatch(criteriaNeedles('Observation', 'subject=Patient/abc-123', typeOf), text(obs))).toBe(true);
    expect(mayMatch(criteriaNeedles('Observation', 'identifier=urn:x|id-9', typeOf), text(obs))).toBe(true);
  });

  it('rejects resources that certainly do not match', () => {
    expect(mayMatch(criteriaNeedles('Observation', 'code=1234-5', typeOf), text(obs))).toBe(false);
    expect(mayMatch(criteriaNeedles('Observation', 'code=8867-4&subject=Patient/other', typeOf), text(obs))).toBe(
      false,
    );
  });

  it('leaves strings, dates, modifiers, chains and odd values to the search', () => {
    for (const query of ['name=zzz', 'date=ge2020', 'code:not=8867-4', 'subject.name=x', 'code=a\\"b', '_id=x']) {
      expect(criteriaNeedles('Observation', query, typeOf)).toEqual([]);
    }
    expect(mayMatch([], text(obs))).toBe(true);
  });
});
