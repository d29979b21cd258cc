/**
 * UCUM units for quantity search (hl7.org/fhir/R4/search.html#quantity): a quantity is indexed,
 * and a search value compared, in base units (`toBaseUnits`: the UCUM library's conversion,
 * platform/ucum.ts, applied in exact decimals), so 2 [lb_av] compares with 907.18474 g, 90 min
 * with 1.5 h, 37 Cel with 310.15 K. A unit without base units (arbitrary units such as [IU], or
 * a code the library does not parse) falls back to `normalizeUcum`: metric prefixes folded into
 * a power of ten (5 mg and 0.005 g), other units as written.
 */
import { ucumBaseConversion } from '../../platform/ucum.js';
import { parseDecimal, shiftDecimal, type Decimal } from './decimals.js';

export interface NormalizedUnit {
  /** Canonical unit without prefixes: 'g', 'g/L', 'mol/L', 'm[Hg]'. */
  unit: string;
  /** value in `unit` = value × 10^power */
  power: number;
}

export const UCUM_SYSTEM = 'http://unitsofmeasure.org';

/** A value in the unit it is compared in. */
export interface CanonicalValue {
  unit: string;
  value: Decimal;
}

function multiply(a: Decimal, b: Decimal): Decimal {
  return { int: a.int * b.int, scale: a.scale + b.scale };
}

function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  const align = (d: Decimal) => d.int * 10n ** BigInt(scale - d.scale);
  return { int: align(a) + align(b), scale };
}

/**
 * A value of a UCUM unit as the value compared in search: in base units when the unit has them,
 * else prefix-folded; undefined when the unit is not understood at all. A conversion by a power
 * of ten (prefixes: mg, kg, mg/dL) is an exact shift of the decimal point, so the value keeps
 * the precision it was written with.
 */
export function toBaseUnits(value: Decimal, code: string): CanonicalValue | undefined {
  const base = ucumBaseConversion(code);
  if (base) {
    const factor = parseDecimal(base.factor);
    const offset = parseDecimal(base.offset);
    if (factor && offset) {
      const scaled = multiply(value, factor);
      return { unit: base.unit, value: offset.int === 0n ? scaled : add(scaled, offset) };
    }
  }
  const folded = normalizeUcum(code);
  return folded ? { unit: folded.unit, value: shiftDecimal(value, folded.power) } : undefined;
}

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
  // Arbitrary units that are metric: no base units, but prefixes apply (m[IU], k[IU]).
  '[IU]',
  '[iU]',
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
