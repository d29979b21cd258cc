import { describe, expect, it } from 'vitest';
import { printableText, unstorableCharacter } from './storable-text.js';

describe('unstorableCharacter', () => {
  it('finds NUL and unpaired surrogates', () => {
    expect(unstorableCharacter('a\u0000b')).toBe('a NUL character (U+0000)');
    expect(unstorableCharacter('\ud800')).toBe('an unpaired UTF-16 surrogate (U+D800)');
    expect(unstorableCharacter('x\udfff')).toBe('an unpaired UTF-16 surrogate (U+DFFF)');
    expect(unstorableCharacter('\ud83d')).toBeDefined();
    // A low surrogate before a high one is two unpaired halves.
    expect(unstorableCharacter('\ude00\ud83d')).toBe('an unpaired UTF-16 surrogate (U+DE00)');
  });

  it('accepts every other character, surrogate pairs included', () => {
    expect(unstorableCharacter('')).toBeUndefined();
    expect(unstorableCharacter('Ünïcødé \u0001\t\n \ud83d\ude00 \uffff \\u0000')).toBeUndefined();
  });

  it('printableText replaces what cannot be stored', () => {
    expect(printableText('a\u0000b\ud800\ud83d\ude00')).toBe('a\ufffdb\ufffd\ud83d\ude00');
  });
});
