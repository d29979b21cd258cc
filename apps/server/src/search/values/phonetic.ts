/**
 * The phonetic key of the `phonetic` name parameters (R4: "a portion of either family or given
 * name using some kind of phonetic matching algorithm"): American Soundex of each word, so
 * Smith, Smyth and Smithe all index as S530.
 */
const CODES: Record<string, string> = {
  b: '1',
  f: '1',
  p: '1',
  v: '1',
  c: '2',
  g: '2',
  j: '2',
  k: '2',
  q: '2',
  s: '2',
  x: '2',
  z: '2',
  d: '3',
  t: '3',
  l: '4',
  m: '5',
  n: '5',
  r: '6',
};

export function soundex(word: string): string | undefined {
  const letters = word
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z]/g, '');
  if (!letters) return undefined;
  let out = letters[0].toUpperCase();
  let last = CODES[letters[0]] ?? '';
  for (let i = 1; i < letters.length && out.length < 4; i++) {
    const c = letters[i];
    const code = CODES[c];
    if (code && code !== last) out += code;
    // h and w do not separate equal codes; vowels do.
    if (c !== 'h' && c !== 'w') last = code ?? '';
  }
  return out.padEnd(4, '0');
}

/** The phonetic keys of a text: one per word. */
export function phoneticKeys(text: string): string[] {
  return text
    .split(/[\s,.-]+/)
    .map((w) => soundex(w))
    .filter((k): k is string => k !== undefined);
}
