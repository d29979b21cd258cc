/**
 * Exact decimal arithmetic for search: the implicit range of a number's precision
 * (hl7.org/fhir/R4/search.html#number: "100" means [99.5, 100.5), "1e2" means [50, 150)) and
 * UCUM prefix scaling (mg to g is a shift by 10^-3), without binary floating point errors.
 */
export interface Decimal {
  /** value = int × 10^-scale */
  int: bigint;
  scale: number;
}

const DECIMAL_RE = /^([-+]?)(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d{1,4}))?$/;

export function parseDecimal(text: string): Decimal | undefined {
  const m = DECIMAL_RE.exec(text.trim());
  if (!m) {
    return undefined;
  }
  const fraction = m[3] ?? '';
  const exponent = m[4] ? Number(m[4]) : 0;
  const int = BigInt(`${m[1] === '-' ? '-' : ''}${m[2]}${fraction}`);
  return { int, scale: fraction.length - exponent };
}

/** Formats a decimal as a plain numeric literal ('-0.0054', '150'). */
export function formatDecimal(d: Decimal): string {
  const negative = d.int < 0n;
  let digits = (negative ? -d.int : d.int).toString();
  let out: string;
  if (d.scale <= 0) {
    out = digits === '0' ? '0' : digits + '0'.repeat(-d.scale);
  } else {
    if (digits.length <= d.scale) {
      digits = '0'.repeat(d.scale - digits.length + 1) + digits;
    }
    out = `${digits.slice(0, digits.length - d.scale)}.${digits.slice(digits.length - d.scale)}`;
  }
  return negative && out !== '0' ? `-${out}` : out;
}

/** value × 10^power, exactly. */
export function shiftDecimal(d: Decimal, power: number): Decimal {
  return { int: d.int, scale: d.scale - power };
}

/** The implicit range of a number written with its precision: [value - half ulp, value + half ulp). */
export function precisionRange(d: Decimal): { low: Decimal; high: Decimal } {
  const int = d.int * 10n;
  return { low: { int: int - 5n, scale: d.scale + 1 }, high: { int: int + 5n, scale: d.scale + 1 } };
}

/** A JSON number or numeric string as a decimal literal; undefined for anything else. */
export function decimalText(value: unknown): string | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) ? String(value) : undefined;
  }
  if (typeof value === 'string' && DECIMAL_RE.test(value.trim())) {
    const d = parseDecimal(value);
    return d ? formatDecimal(d) : undefined;
  }
  return undefined;
}
