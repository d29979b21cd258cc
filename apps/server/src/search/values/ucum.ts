/**
 * UCUM unit normalisation for quantity search (hl7.org/fhir/R4/search.html#quantity): metric
 * prefixes are folded into a power of ten, so that 5 mg and 0.005 g index to the same value
 * in the same unit ('g'), and mg/dL compares with g/L. Units that are not metric (min, %, Cel,
 * [in_i]) are kept as they are; a unit this parser does not understand is kept verbatim.
 */
export interface NormalizedUnit {
  /** Canonical unit without prefixes: 'g', 'g/L', 'mol/L', 'm[Hg]'. */
  unit: string;
  /** value in `unit` = value × 10^power */
  power: number;
}

export const UCUM_SYSTEM = 'http://unitsofmeasure.org';

const PREFIXES: [string, number][] = [
  ['da', 1],
  ['Y', 24],
  ['Z', 21],
  ['E', 18],
  ['P', 15],
  ['T', 12],
  ['G', 9],
  ['M', 6],
  ['k', 3],
  ['h', 2],
  ['d', -1],
  ['c', -2],
  ['m', -3],
  ['u', -6],
  ['n', -9],
  ['p', -12],
  ['f', -15],
  ['a', -18],
  ['z', -21],
  ['y', -24],
];

/** Metric atoms that take prefixes (UCUM §'metric' units). */
const METRIC = new Set([
  'm',
  's',
  'g',
  'L',
  'l',
  'mol',
  'eq',
  'K',
  'cd',
  'rad',
  'sr',
  'Hz',
  'N',
  'Pa',
  'J',
  'W',
  'A',
  'C',
  'V',
  'F',
  'Ohm',
  'S',
  'Wb',
  'T',
  'H',
  'lm',
  'lx',
  'Bq',
  'Gy',
  'Sv',
  'kat',
  'U',
  'bar',
  'cal',
  'B',
  'm[Hg]',
  'm[H2O]',
  'osm',
]);

/** Atoms that must not be split into prefix + atom ('min' is not milli-inch). */
const WHOLE = new Set(['min', 'h', 'd', 'wk', 'mo', 'a', 'cd', 'Cel', 'mol', 'mho', 'Ao', 'dB', 'pH', 'ph']);

function normalizeAtom(atom: string): { atom: string; power: number } {
  if (METRIC.has(atom) || WHOLE.has(atom) || atom.startsWith('[') || atom === '%') {
    return { atom: atom === 'l' ? 'L' : atom, power: 0 };
  }
  for (const [prefix, power] of PREFIXES) {
    if (atom.length > prefix.length && atom.startsWith(prefix)) {
      const rest = atom.slice(prefix.length);
      if (METRIC.has(rest)) {
        return { atom: rest === 'l' ? 'L' : rest, power };
      }
    }
  }
  return { atom, power: 0 };
}

/** Normalises a UCUM code; undefined when it is not a product/quotient of simple terms. */
export function normalizeUcum(code: string): NormalizedUnit | undefined {
  const text = code.replace(/\{[^}]*\}/g, '').trim();
  if (!text || /\s|\(/.test(text)) {
    return undefined;
  }
  let power = 0;
  const numerator: string[] = [];
  const denominator: string[] = [];
  // Split into terms keeping the operator before each: '' (first), '.', '/'.
  const terms = text.match(/[./]?[^./]*/g)?.filter((t) => t !== '') ?? [];
  for (const raw of terms) {
    const divide = raw.startsWith('/');
    const term = raw.startsWith('.') || raw.startsWith('/') ? raw.slice(1) : raw;
    if (term === '') {
      continue;
    }
    const factor = /^10[*^]([-+]?\d+)$/.exec(term);
    if (factor) {
      power += (divide ? -1 : 1) * Number(factor[1]);
      continue;
    }
    if (/^\d+$/.test(term)) {
      if (term !== '1') {
        return undefined;
      }
      continue;
    }
    const m = /^(\[[^\]]+\]|[^0-9+-]+?)([-+]?\d+)?$/.exec(term);
    if (!m) {
      return undefined;
    }
    const exponent = m[2] ? Number(m[2]) : 1;
    const { atom, power: p } = normalizeAtom(m[1]);
    power += (divide ? -1 : 1) * p * exponent;
    const written = exponent === 1 ? atom : `${atom}${exponent}`;
    (divide ? denominator : numerator).push(written);
  }
  const unit = (numerator.join('.') || '1') + denominator.map((d) => `/${d}`).join('');
  return { unit: unit === '1' ? '1' : unit.replace(/^1\//, '/'), power };
}
