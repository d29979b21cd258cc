import { describe, expect, it } from 'vitest';
import { interpretPatientQuery } from './patient-query.js';

describe('interpretPatientQuery', () => {
  it('reads birth dates, day first when written with slashes or dots', () => {
    expect(interpretPatientQuery(' 1984-05-06 ')?.params).toEqual({ birthdate: '1984-05-06' });
    expect(interpretPatientQuery('6/5/1984')?.params).toEqual({ birthdate: '1984-05-06' });
    expect(interpretPatientQuery('06.05.1984')?.params).toEqual({ birthdate: '1984-05-06' });
  });

  it('reads digits as a phone number or an identifier', () => {
    expect(interpretPatientQuery('555-637-1474')).toEqual({
      kind: 'phone-or-identifier',
      params: { _filter: 'phone eq "555-637-1474" or identifier eq "555-637-1474"' },
      description: 'Phone number or identifier 555-637-1474',
    });
    expect(interpretPatientQuery('+44 (20) 7946 0958')?.kind).toBe('phone-or-identifier');
  });

  it('reads system|value, and letters with digits, as identifiers', () => {
    expect(interpretPatientQuery('http://hospital.example/mrn|A1')?.params).toEqual({
      identifier: 'http://hospital.example/mrn|A1',
    });
    expect(interpretPatientQuery('MRN-001')?.params).toEqual({ identifier: 'MRN-001' });
    expect(interpretPatientQuery('b5e6a2c1-0d3f-4e4a-9f57-2bc1ec9f0a11')?.kind).toBe('identifier');
  });

  it('reads anything else as a name, and nothing as no search', () => {
    expect(interpretPatientQuery('Ada Love')?.params).toEqual({ name: 'Ada Love' });
    expect(interpretPatientQuery('Louis XIV 2nd')?.kind).toBe('name');
    expect(interpretPatientQuery('   ')).toBeUndefined();
    expect(interpretPatientQuery('31/02/2024')?.kind).not.toBe('birthdate');
  });
});
