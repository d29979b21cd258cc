import type { Dosage } from '@hearth/fhir-types';

/** Routes (SNOMED CT, R4's route-codes value set) and the words a sig uses for them. */
export const ROUTE_WORDS: Record<string, string> = {
  '26643006': 'by mouth',
  '78421000': 'into the muscle',
  '47625008': 'into a vein',
  '34206005': 'under the skin',
  '6064005': 'on the skin',
  '447694001': 'by inhalation',
  '37161004': 'rectally',
  '37839007': 'under the tongue',
  '46713006': 'in the nose',
};

const PERIOD_UNITS: Record<string, [string, string]> = {
  s: ['second', 'seconds'],
  min: ['minute', 'minutes'],
  h: ['hour', 'hours'],
  d: ['day', 'days'],
  wk: ['week', 'weeks'],
  mo: ['month', 'months'],
  a: ['year', 'years'],
};

/** Plural of a dose unit word: "capsule" → "capsules"; UCUM symbols (mg, mL) stay as they are. */
function unitWord(unit: string, value: number): string {
  if (value === 1 || /^[a-zµ]*[A-Z]/.test(unit) || /^(mg|mcg|g|ug|mL|ml|L|IU|\[iU\]|U)$/.test(unit)) return unit;
  if (/(s|sh|ch|x)$/.test(unit)) return `${unit}es`;
  return `${unit}s`;
}

function num(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(3)));
}

function times(n: number): string {
  if (n === 1) return 'once';
  if (n === 2) return 'twice';
  return `${num(n)} times`;
}

function every(period: number, unit: string): string {
  const [one, many] = PERIOD_UNITS[unit] ?? [unit, unit];
  if (period === 1) return unit === 'd' ? 'a day' : `a ${one}`;
  return `every ${num(period)} ${many}`;
}

/**
 * A plain-language sig from a structured Dosage (hl7.org/fhir/R4/dosage.html), e.g. "Take 1
 * capsule by mouth 3 times a day for 10 days". Reads doseAndRate[0].doseQuantity (or doseRange),
 * route, timing.repeat (frequency / period / periodUnit, or periodMax: "every 4 to 6 hours"),
 * boundsDuration, asNeeded[Boolean|CodeableConcept] and additionalInstruction; falls back to
 * Dosage.text when it has nothing structured.
 */
export function formatSig(dosage: Dosage | undefined): string {
  if (!dosage) return '';
  const parts: string[] = [];
  const dose = dosage.doseAndRate?.[0];
  const quantity = dose?.doseQuantity;
  const range = dose?.doseRange;
  const routeCode = dosage.route?.coding?.find((c) => c.code && ROUTE_WORDS[c.code]);
  const route = routeCode ? ROUTE_WORDS[routeCode.code as string] : dosage.route?.text?.toLowerCase();
  const verb = routeCode?.code === '447694001' ? 'Inhale' : routeCode?.code === '6064005' ? 'Apply' : 'Take';
  if (quantity?.value !== undefined) {
    const unit = quantity.unit ?? quantity.code ?? '';
    parts.push(verb, `${num(quantity.value)}${unit ? ` ${unitWord(unit, quantity.value)}` : ''}`);
  } else if (range?.low?.value !== undefined && range.high?.value !== undefined) {
    const unit = range.high.unit ?? range.high.code ?? range.low.unit ?? '';
    parts.push(
      verb,
      `${num(range.low.value)} to ${num(range.high.value)}${unit ? ` ${unitWord(unit, range.high.value)}` : ''}`,
    );
  } else if (route || dosage.timing?.repeat) {
    parts.push(verb);
  }
  if (route) parts.push(route);
  const repeat = dosage.timing?.repeat;
  if (repeat) {
    const frequency = repeat.frequency ?? 1;
    const period = repeat.period;
    const unit = repeat.periodUnit;
    if (period !== undefined && unit) {
      if (repeat.periodMax !== undefined && frequency === 1) {
        parts.push(`every ${num(period)} to ${num(repeat.periodMax)} ${PERIOD_UNITS[unit]?.[1] ?? unit}`);
      } else if (frequency === 1 && period !== 1) {
        parts.push(every(period, unit));
      } else if (period === 1 && unit === 'd' && frequency === 1) {
        parts.push('once a day');
      } else {
        parts.push(`${times(frequency)} ${every(period, unit)}`);
      }
    }
    const bounds = repeat.boundsDuration;
    if (bounds?.value !== undefined) {
      const code = bounds.code ?? bounds.unit ?? '';
      const [one, many] = PERIOD_UNITS[code] ?? [bounds.unit ?? code, bounds.unit ?? code];
      parts.push(`for ${num(bounds.value)} ${bounds.value === 1 ? one : many}`);
    }
  }
  if (dosage.asNeededBoolean) {
    parts.push('as needed');
  } else if (dosage.asNeededCodeableConcept) {
    const reason =
      dosage.asNeededCodeableConcept.text ?? dosage.asNeededCodeableConcept.coding?.[0]?.display ?? undefined;
    parts.push(reason ? `as needed for ${reason.toLowerCase()}` : 'as needed');
  }
  if (!parts.length) return dosage.text ?? '';
  const extra = (dosage.additionalInstruction ?? [])
    .map((i) => i.text ?? i.coding?.[0]?.display)
    .filter((t): t is string => !!t);
  const sentence = parts.join(' ');
  return [sentence, ...extra].map((s) => s.replace(/[.\s]+$/, '')).join('. ');
}
