import { describe, expect, it } from 'vitest';
import { matchesScimFilter, parseScimFilter } from './filter.js';

const user = {
  userName: 'Ada@Example.com',
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [
    { value: 'ada@example.com', type: 'work', primary: true },
    { value: 'ada@home.org', type: 'home' },
  ],
  active: true,
  externalId: 'x-1',
  meta: { lastModified: '2024-05-01T00:00:00Z' },
};
const m = (f: string) => matchesScimFilter(parseScimFilter(f), user);

describe('SCIM filters', () => {
  it('compares attributes case-insensitively', () => {
    expect(m('userName eq "ada@example.com"')).toBe(true);
    expect(m('name.familyName sw "love"')).toBe(true);
    expect(m('name.givenName ew "x"')).toBe(false);
    expect(m('userName co "example"')).toBe(true);
    expect(m('active eq true')).toBe(true);
    expect(m('externalId pr')).toBe(true);
    expect(m('title pr')).toBe(false);
    expect(m('meta.lastModified gt "2024-01-01T00:00:00Z"')).toBe(true);
    expect(m('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ada@example.com"')).toBe(true);
  });

  it('combines with and, or, not and parentheses; value paths filter within multi-valued attributes', () => {
    expect(m('userName eq "x" or name.givenName eq "ada"')).toBe(true);
    expect(m('userName eq "x" or name.givenName eq "ada" and active eq false')).toBe(false);
    expect(m('(userName eq "x" or name.givenName eq "ada") and not (active eq false)')).toBe(true);
    expect(m('emails[type eq "work" and value co "@example.com"]')).toBe(true);
    expect(m('emails[type eq "home" and value co "@example.com"]')).toBe(false);
    expect(m('emails.value eq "ada@home.org"')).toBe(true);
  });

  it('rejects malformed filters with 400', () => {
    for (const bad of [
      'userName',
      'userName xx "a"',
      'userName eq',
      '(userName eq "a"',
      'userName eq "a" extra',
      'userName eq "unterminated',
    ]) {
      expect(() => parseScimFilter(bad), bad).toThrow();
    }
  });
});
