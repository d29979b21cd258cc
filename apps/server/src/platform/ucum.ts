/**
 * UCUM (unitsofmeasure.org) through the LHC's library (@lhncbc/ucum-lhc): whether a unit code is
 * valid, and how a value in a unit becomes a value in base units ('[lb_av]' → g, 'h' → s,
 * 'Cel' → K, 'mg/dL' → g.m-3). A conversion is written as decimal text, base = value × factor +
 * offset, so callers can apply it exactly (search/values/ucum.ts in decimals, a migration in SQL
 * numerics). The UCUM tables are fixed, so what the library answers for a code never changes:
 * answers are remembered (up to a bound) because a conversion costs ~40 µs and an index row needs one.
 */
import ucum from '@lhncbc/ucum-lhc';

export interface BaseUnitConversion {
  /** The base units with their exponents, sorted: 'g', 'g.m-3', 's-1', '1' for a pure number. */
  unit: string;
  /** Decimal text: the value of 1 of the unit in base units, less the offset. */
  factor: string;
  /** Decimal text; '0' but for the units on an interval scale (Cel, [degF]). */
  offset: string;
}

const utils = ucum.UcumLhcUtils.getInstance();
/** Codes remembered at most; beyond, answers are computed each time (a bound on memory, not a cache to invalidate). */
const MAX_REMEMBERED = 5000;
const conversions = new Map<string, BaseUnitConversion | null>();
const validity = new Map<string, boolean>();

/**
 * The float the library computes, as the shortest decimal with 15 significant digits: prefixes
 * (1e-3 computed as 0.0010000000000000002) come out as exact powers of ten.
 */
function decimalTextOf(value: number): string {
  return Number(value.toPrecision(15)).toString();
}

function baseUnitName(exponents: Record<string, number>): string {
  const parts = Object.keys(exponents)
    .filter((k) => exponents[k] !== 0)
    .sort()
    .map((k) => (exponents[k] === 1 ? k : `${k}${exponents[k]}`));
  return parts.length > 0 ? parts.join('.') : '1';
}

function computeConversion(code: string): BaseUnitConversion | null {
  try {
    const one = utils.convertToBaseUnits(code, 1);
    if (one.status !== 'succeeded' || one.magnitude === undefined || !one.unitToExp) {
      return null; // arbitrary units ([IU]) and invalid codes have no base units
    }
    const zero = utils.convertToBaseUnits(code, 0);
    const offset = zero.status === 'succeeded' ? (zero.magnitude ?? 0) : 0;
    const factor = one.magnitude - offset;
    if (!Number.isFinite(factor) || factor <= 0 || !Number.isFinite(offset)) {
      return null;
    }
    return { unit: baseUnitName(one.unitToExp), factor: decimalTextOf(factor), offset: decimalTextOf(offset) };
  } catch {
    return null; // the library throws on some malformed codes
  }
}

/** How values in `code` become values in base units; undefined for codes with none. */
export function ucumBaseConversion(code: string): BaseUnitConversion | undefined {
  let conversion = conversions.get(code);
  if (conversion === undefined) {
    conversion = computeConversion(code);
    if (conversions.size < MAX_REMEMBERED) {
      conversions.set(code, conversion);
    }
  }
  return conversion ?? undefined;
}

/** Whether `code` is a valid UCUM unit expression (annotations such as {beats} included). */
export function isValidUcum(code: string): boolean {
  let valid = validity.get(code);
  if (valid === undefined) {
    try {
      valid = code.trim() === code && code !== '' && utils.validateUnitString(code).status === 'valid';
    } catch {
      valid = false;
    }
    if (validity.size < MAX_REMEMBERED) {
      validity.set(code, valid);
    }
  }
  return valid;
}
