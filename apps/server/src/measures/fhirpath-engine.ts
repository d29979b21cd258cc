// Simple measures whose criteria are FHIRPath (`text/fhirpath`), with the fhirpath package Hearth
// already uses. Each expression is evaluated with the Patient as its context and these variables:
// %subject / %patient (the Patient), %record (a collection Bundle of the patient's record: the
// resources of the Patient compartment the caller may read), %resources (short for
// %record.entry.resource), %periodStart and %periodEnd (the measurement period's bounds, written
// into the expression as dateTime literals, so `effective >= %periodStart` compares as dates).
// fhirpath.js cannot take a list of resources as a variable, hence the Bundle.
import fhirpath from 'fhirpath';
import r4Model from 'fhirpath/fhir-context/r4/index.js';
import { fail, unprocessable } from '@hearth/core';
import { yieldToLoop, type MeasureEngine, type SubjectFailure, type SubjectSink } from './cql-engine.js';
import type { PatientRecord } from './records.js';
import { evaluated, type Evaluated } from './values.js';

type Compiled = (resource: unknown, env?: Record<string, unknown>) => unknown[];

export interface FhirPathEngineOptions {
  /** Expression text → whether it is read as a boolean-basis population. */
  expressions: Map<string, { boolean: boolean }>;
  period: { low: number; high: number };
}

/**
 * The types a set of FHIRPath expressions reads from %resources: those named by `ofType(T)`; every
 * compartment type when some expression uses %resources otherwise.
 */
export function fhirPathTypes(expressions: string[], allTypes: string[]): string[] {
  const types = new Set<string>();
  for (const e of expressions) {
    if (!e.includes('%resources')) continue;
    const named = [...e.matchAll(/%resources\s*\.\s*ofType\(\s*([A-Za-z]+)\s*\)/g)].map((m) => m[1]);
    const uses = (e.match(/%resources/g) ?? []).length;
    if (named.length < uses) return allTypes;
    for (const t of named) types.add(t);
  }
  return [...types].sort();
}

export class FhirPathEngine implements MeasureEngine {
  private readonly compiled = new Map<string, Compiled>();

  constructor(private readonly options: FhirPathEngineOptions) {
    const literal = (ms: number) => `@${new Date(ms).toISOString()}`;
    for (const expression of options.expressions.keys()) {
      const text = expression
        .replace(/%resources\b/g, '%record.entry.resource')
        .replace(/%periodStart\b/g, literal(options.period.low))
        .replace(/%periodEnd\b/g, literal(options.period.high - 1));
      try {
        this.compiled.set(expression, fhirpath.compile(text, r4Model) as unknown as Compiled);
      } catch (err) {
        fail(unprocessable(`FHIRPath "${expression}" does not compile: ${(err as Error).message}`, 'Measure.group'));
      }
    }
  }

  /** Evaluates each record; a patient whose expression fails goes to `failed` (without it: a 422). */
  async run(
    batches: AsyncIterable<PatientRecord[]>,
    sink: SubjectSink,
    failed?: (failure: SubjectFailure) => void,
  ): Promise<void> {
    let done = 0;
    for await (const batch of batches) {
      for (const [patient, ...rest] of batch) {
        const id = String(patient.id);
        const record = {
          resourceType: 'Bundle',
          type: 'collection',
          entry: [patient, ...rest].map((resource) => ({ resource })),
        };
        const env = { subject: patient, patient, record };
        const values = new Map<string, Evaluated>();
        let failure: string | undefined;
        for (const [expression, { boolean }] of this.options.expressions) {
          let result: unknown[];
          try {
            result = (this.compiled.get(expression) as Compiled)(patient, env);
          } catch (err) {
            failure = `FHIRPath "${expression}": ${(err as Error).message}`;
            if (failed) break;
            fail(
              unprocessable(
                `FHIRPath "${expression}" failed for Patient/${id}: ${(err as Error).message}`,
                'Measure.group',
              ),
            );
          }
          const value = boolean && result.length === 1 ? result[0] : result;
          values.set(expression, evaluated(dateless(value), boolean));
        }
        if (failure && failed) failed({ patientId: id, message: failure });
        else sink({ patientId: id, values });
        if (++done % 50 === 0) await yieldToLoop();
      }
    }
  }
}

/** fhirpath.js answers FHIR dates as its own objects in some builds: their text is what a category shows. */
function dateless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dateless);
  if (value && typeof value === 'object' && !('resourceType' in value) && typeof value.toString === 'function') {
    const text = String(value);
    if (/^\d{4}(-\d{2})?/.test(text)) return text;
  }
  return value;
}
