import { describe, expect, it } from 'vitest';
import { parseFilterExpression } from './filter-parse.js';

describe('parseFilterExpression string values', () => {
  it('decodes JSON escapes', () => {
    expect(parseFilterExpression('name eq "a\\u00e9\\"b"')).toMatchObject({ kind: 'param', value: 'aé"b' });
  });

  it('refuses an escape that decodes to text the database cannot store', () => {
    expect(() => parseFilterExpression('name eq "a\\u0000"')).toThrow(/NUL character/);
    expect(() => parseFilterExpression('name eq "\\ud800"')).toThrow(/unpaired UTF-16 surrogate/);
  });
});
