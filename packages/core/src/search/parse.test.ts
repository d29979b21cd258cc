import { describe, expect, it } from 'vitest';
import { OperationOutcomeError } from '../outcome.js';
import { formatSearchQuery } from './format.js';
import { parseSearchRequest, splitModifier, splitSearchValue } from './parse.js';
import { Operator } from './types.js';

describe('parseSearchRequest', () => {
  it('parses a relative URL with filters, modifiers and prefixes', () => {
    const req = parseSearchRequest('Patient?name:contains=smi&birthdate=ge2000-01-01&gender=female');
    expect(req.resourceType).toBe('Patient');
    expect(req.filters).toEqual([
      { code: 'name', operator: Operator.CONTAINS, value: 'smi' },
      { code: 'birthdate', operator: Operator.GREATER_THAN_OR_EQUALS, value: '2000-01-01' },
      { code: 'gender', operator: Operator.EQUALS, value: 'female' },
    ]);
  });

  it('parses an absolute URL and a _search path', () => {
    expect(parseSearchRequest('https://h/fhir/R4/Observation?code=x').resourceType).toBe('Observation');
    expect(parseSearchRequest('https://h/fhir/R4/Observation/_search?code=x').resourceType).toBe('Observation');
  });

  it('reads result parameters', () => {
    const req = parseSearchRequest('Observation', {
      _sort: '-date,code',
      _count: '10',
      _offset: '20',
      _include: 'Observation:subject:Patient',
      '_revinclude:iterate': 'Provenance:target',
      _total: 'accurate',
      _summary: 'count',
      _elements: 'id,code',
      _type: 'Patient,Observation',
    });
    expect(req.sortRules).toEqual([{ code: 'date', descending: true }, { code: 'code' }]);
    expect(req.count).toBe(10);
    expect(req.offset).toBe(20);
    expect(req.include).toEqual([{ resourceType: 'Observation', searchParam: 'subject', targetType: 'Patient' }]);
    expect(req.revInclude).toEqual([{ resourceType: 'Provenance', searchParam: 'target', modifier: 'iterate' }]);
    expect(req.total).toBe('accurate');
    expect(req.summary).toBe('count');
    expect(req.fields).toEqual(['id', 'code']);
    expect(req.types).toEqual(['Patient', 'Observation']);
  });

  it('rejects malformed result parameters with a 400 naming them', () => {
    expect(() => parseSearchRequest('Patient?_count=abc')).toThrow(OperationOutcomeError);
    try {
      parseSearchRequest('Patient?_total=maybe');
    } catch (err) {
      expect((err as OperationOutcomeError).outcome.issue[0].expression).toEqual(['_total']);
    }
  });

  it('keeps type modifiers and chains in the code', () => {
    expect(splitModifier('subject:Patient.name:exact')).toEqual({ code: 'subject:Patient.name', modifier: 'exact' });
    expect(splitModifier('subject:Patient')).toEqual({ code: 'subject:Patient' });
    expect(splitModifier('_has:Observation:subject:identifier')).toEqual({
      code: '_has:Observation:subject:identifier',
    });
    expect(splitModifier('_has:Observation:subject:code:not')).toEqual({
      code: '_has:Observation:subject:code',
      modifier: 'not',
    });
  });

  it('only reads prefixes of prefixable parameters when types are known', () => {
    const paramType = (_t: string, code: string) => (code === 'family' ? 'string' : 'date') as 'string' | 'date';
    const req = parseSearchRequest('Patient', { family: 'lee5', birthdate: 'lt2000' }, { paramType });
    expect(req.filters?.[0]).toEqual({ code: 'family', operator: Operator.EQUALS, value: 'lee5' });
    expect(req.filters?.[1]).toEqual({ code: 'birthdate', operator: Operator.LESS_THAN, value: '2000' });
  });

  it('leaves several prefixed alternatives in the value', () => {
    const req = parseSearchRequest('Observation?date=lt2000,gt2010');
    expect(req.filters?.[0]).toEqual({ code: 'date', operator: Operator.EQUALS, value: 'lt2000,gt2010' });
  });
});

describe('text a database cannot store', () => {
  it('refuses a NUL or an unpaired surrogate in a name or value, naming the parameter', () => {
    for (const query of ['name=a%00b', 'identifier=x%7C%00']) {
      const name = query.split('=')[0];
      expect(() => parseSearchRequest(`Patient?${query}`)).toThrow(
        expect.objectContaining({
          outcome: expect.objectContaining({ issue: [expect.objectContaining({ expression: [name] })] }),
        }),
      );
    }
    expect(() => parseSearchRequest('Patient', { name: '\ud800' })).toThrow(/unpaired UTF-16 surrogate/);
    expect(() => parseSearchRequest('Patient', { 'na\u0000me': 'x' })).toThrow(/NUL/);
    expect(parseSearchRequest('Patient', { name: '\ud83d\ude00' }).filters?.[0].value).toBe('\ud83d\ude00');
  });
});

describe('splitSearchValue', () => {
  it('splits on unescaped separators and unescapes', () => {
    expect(splitSearchValue('a\\,b,c')).toEqual(['a,b', 'c']);
    expect(splitSearchValue('x\\|y|z', '|')).toEqual(['x|y', 'z']);
    expect(splitSearchValue('a\\\\,b\\')).toEqual(['a\\', 'b\\']);
    expect(splitSearchValue('a\\x,,b')).toEqual(['a\\x', '', 'b']);
    const ors = splitSearchValue('s\\|1|c\\,d,e', ',', false);
    expect(ors).toEqual(['s\\|1|c\\,d', 'e']);
    expect(splitSearchValue(ors[0], '|')).toEqual(['s|1', 'c,d']);
  });
});

describe('formatSearchQuery', () => {
  it('round-trips', () => {
    const url = 'Patient?name:contains=smi&birthdate=ge2000&_sort=-birthdate&_count=5&_include=Patient:organization';
    const req = parseSearchRequest(url);
    expect(formatSearchQuery(req)).toBe(
      '?name:contains=smi&birthdate=ge2000&_sort=-birthdate&_include=Patient%3Aorganization&_count=5',
    );
    expect(parseSearchRequest('Patient' + formatSearchQuery(req))).toEqual(req);
  });
});
