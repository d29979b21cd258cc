// The inputs of Measure/$evaluate-measure (hl7.org/fhir/R4/measure-operation-evaluate-measure.html),
// from the query string or a Parameters body, checked: every mistake is a 400 naming the parameter.
import { badRequest, fail } from '@hearth/core';
import type { OperationInput } from '../operations/types.js';
import { parseDateRange } from '../search/values/dates.js';

export type ReportType = 'individual' | 'subject-list' | 'summary';

export interface MeasurementPeriod {
  /** As given (a date or a dateTime): MeasureReport.period.start. */
  start: string;
  end: string;
  /** The same bounds as CQL DateTime text: the start of `start`, the last millisecond of `end`. */
  cqlStart: string;
  cqlEnd: string;
  /** Epoch milliseconds [low, high), for FHIRPath measures. */
  low: number;
  high: number;
}

export interface EvaluateParameters {
  period: MeasurementPeriod;
  /** Patient/{id} or Group/{id}; undefined: every patient the caller may read. */
  subject?: { resourceType: 'Patient' | 'Group'; id: string };
  reportType: ReportType;
  /** At type level: the Measure by canonical url (url or url|version) or Measure/{id}. */
  measure?: string;
  /** Store the MeasureReport through the caller's repository (`persist=true`). */
  persist: boolean;
}

/** R4 names the report types subject | subject-list | population; MeasureReport.type's codes are accepted too. */
const REPORT_TYPES: Record<string, ReportType> = {
  subject: 'individual',
  individual: 'individual',
  'subject-list': 'subject-list',
  population: 'summary',
  summary: 'summary',
};

const KNOWN = new Set(['periodStart', 'periodEnd', 'subject', 'reportType', 'measure', 'persist']);
const REFERENCE = /^(Patient|Group)\/([A-Za-z0-9\-.]{1,64})$/;
const DATE_ONLY = /^\d{4}(-\d{2}(-\d{2})?)?$/;

/** The parameters as name → value, from the query string and (POST) a Parameters body. */
export function rawParameters(input: Pick<OperationInput, 'query' | 'body' | 'method'>): Map<string, string> {
  const values = new Map<string, string>();
  for (const [name, value] of input.query) values.set(name, value);
  const body = input.body as { resourceType?: string; parameter?: Record<string, unknown>[] } | undefined;
  if (input.method === 'POST' && body !== undefined && body !== null) {
    if (typeof body !== 'object' || Buffer.isBuffer(body) || body.resourceType !== 'Parameters') {
      fail(badRequest('Measure/$evaluate-measure takes a Parameters resource in a POST body'));
    }
    for (const [i, p] of (body.parameter ?? []).entries()) {
      if (typeof p.name !== 'string') fail(badRequest('Each parameter needs a name', `Parameters.parameter[${i}]`));
      const ref = p.valueReference as { reference?: unknown } | undefined;
      const entry = Object.entries(p).find(([k]) => k.startsWith('value'));
      const value = ref ? ref.reference : entry?.[1];
      if (typeof value !== 'string' && typeof value !== 'boolean') {
        fail(
          badRequest(`Parameter ${p.name} must have a primitive value or a reference`, `Parameters.parameter[${i}]`),
        );
      }
      values.set(p.name, String(value));
    }
  }
  return values;
}

/** One bound of the period, as CQL DateTime text: dates span their whole day (or month, year). */
function periodBound(name: 'periodStart' | 'periodEnd', value: string | undefined): { low: number; high: number } {
  if (!value) fail(badRequest(`Measure/$evaluate-measure needs ${name} (a date such as 2019-01-01)`, name));
  const range = parseDateRange(value);
  if (!range) fail(badRequest(`${name} must be a FHIR date or dateTime such as 2019-01-01, got "${value}"`, name));
  return range;
}

/** CQL DateTime text of an instant: without an offset for dates (the engine's own zone), as given otherwise. */
function cqlDateTime(value: string, ms: number): string {
  if (DATE_ONLY.test(value)) return new Date(ms).toISOString().slice(0, 23);
  return new Date(ms).toISOString();
}

export function evaluateParameters(input: Pick<OperationInput, 'query' | 'body' | 'method'>): EvaluateParameters {
  const values = rawParameters(input);
  for (const name of values.keys()) {
    if (!KNOWN.has(name) && !name.startsWith('_')) {
      fail(badRequest(`Measure/$evaluate-measure: parameter "${name}" is not supported by Hearth`, name));
    }
  }
  const startText = values.get('periodStart');
  const endText = values.get('periodEnd');
  const start = periodBound('periodStart', startText);
  const end = periodBound('periodEnd', endText);
  if (start.low >= end.high) fail(badRequest('periodStart must not be after periodEnd', 'periodStart'));
  const period: MeasurementPeriod = {
    start: startText as string,
    end: endText as string,
    cqlStart: cqlDateTime(startText as string, start.low),
    cqlEnd: cqlDateTime(endText as string, end.high - 1),
    low: start.low,
    high: end.high,
  };

  let subject: EvaluateParameters['subject'];
  const subjectText = values.get('subject');
  if (subjectText) {
    const m = REFERENCE.exec(subjectText);
    if (!m) fail(badRequest(`subject must be Patient/{id} or Group/{id}, got "${subjectText}"`, 'subject'));
    subject = { resourceType: m[1] as 'Patient' | 'Group', id: m[2] };
  }

  const typeText = values.get('reportType');
  let reportType: ReportType;
  if (typeText) {
    const t = REPORT_TYPES[typeText];
    if (!t) {
      fail(
        badRequest(
          `reportType must be one of ${Object.keys(REPORT_TYPES).join(', ')}, got "${typeText}"`,
          'reportType',
        ),
      );
    }
    reportType = t;
  } else {
    // R4: subject when a subject is given, population otherwise; a Group is a population.
    reportType = subject?.resourceType === 'Patient' ? 'individual' : 'summary';
  }
  if (reportType === 'individual' && subject?.resourceType !== 'Patient') {
    fail(badRequest('reportType individual (subject) needs subject=Patient/{id}', 'reportType'));
  }

  const persistText = values.get('persist');
  if (persistText !== undefined && persistText !== 'true' && persistText !== 'false') {
    fail(badRequest(`persist must be true or false, got "${persistText}"`, 'persist'));
  }
  return { period, subject, reportType, measure: values.get('measure') || undefined, persist: persistText === 'true' };
}
