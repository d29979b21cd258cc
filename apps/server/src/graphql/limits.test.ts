import { describe, expect, it } from 'vitest';
import { checkNesting, MAX_NESTING } from './limits.js';

describe('checkNesting', () => {
  it('refuses a document nested deeper than the limit before graphql-js parses it recursively', () => {
    expect(() => checkNesting('{' + 'a{'.repeat(10_000) + 'b' + '}'.repeat(10_001))).toThrow(/nested deeper/);
    expect(() => checkNesting(`{ a(x: ${'['.repeat(MAX_NESTING)}1${']'.repeat(MAX_NESTING)}) { b } }`)).toThrow(
      /nested deeper/,
    );
  });

  it('counts no bracket inside strings, block strings or comments', () => {
    const many = '{'.repeat(MAX_NESTING * 2);
    expect(() => checkNesting(`{ a(x: "${many}\\"${many}") { b } }`)).not.toThrow();
    expect(() => checkNesting(`{ a(x: """${many} \\""" ${many}""") { b } }`)).not.toThrow();
    expect(() => checkNesting(`# ${many}\n{ a { b } }`)).not.toThrow();
    expect(() => checkNesting('{ a { b { c } } }')).not.toThrow();
  });
});
