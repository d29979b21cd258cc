// Runs a Measure's CQL (as ELM JSON) with cql-execution, the cqframework engine for JavaScript,
// and cql-exec-fhir's FHIR 4.0.1 model over the records Hearth reads as the caller. Patients are
// evaluated in batches so that the engine's results never hold more than one batch in memory.
import { fail, unprocessable, type Resource } from '@hearth/core';
import { DateTime, Executor, Interval, Repository as ElmRepository, type PatientObject } from 'cql-execution';
import cqlFhir, { type FhirPatientSource } from 'cql-exec-fhir';
import type { Elm } from './library.js';
import type { RecordPrefetcher } from './records.js';
import { evaluated, type Evaluated } from './values.js';
import type { ExpandedValueSets } from './value-sets.js';

export interface SubjectValues {
  patientId: string;
  values: Map<string, Evaluated>;
}

export type SubjectSink = (subject: SubjectValues) => void;

/** How many patients one engine run takes before its results are read and dropped. */
const BATCH = 50;
export const MEASUREMENT_PERIOD = 'Measurement Period';

/** cql-execution's DataProvider over the next `limit` records of the prefetcher. */
class BatchSource {
  private current: PatientObject | undefined;
  private started = false;
  private taken = 0;
  done = false;

  constructor(
    private readonly records: RecordPrefetcher,
    private readonly fhir: FhirPatientSource,
    private readonly limit: number,
  ) {}

  async currentPatient(): Promise<PatientObject | undefined> {
    if (!this.started) {
      this.started = true;
      await this.advance();
    }
    return this.current;
  }

  async nextPatient(): Promise<PatientObject | undefined> {
    await this.advance();
    return this.current;
  }

  private async advance(): Promise<void> {
    this.current = undefined;
    while (this.taken < this.limit) {
      const next = await this.records.take();
      if (!next) {
        this.done = true;
        return;
      }
      this.taken++;
      if (!next.record) continue; // not readable by the caller: not part of the population
      this.fhir.reset();
      this.fhir.loadBundles([recordBundle(next.record)]);
      this.current = this.fhir.currentPatient();
      return;
    }
  }
}

function recordBundle(record: Resource[]): unknown {
  return { resourceType: 'Bundle', type: 'collection', entry: record.map((resource) => ({ resource })) };
}

export interface CqlEngineOptions {
  libraries: Elm[];
  main: Elm;
  valueSets: ExpandedValueSets;
  period: { cqlStart: string; cqlEnd: string };
  /** The expressions to read per patient, and whether each is read as a boolean-basis population. */
  expressions: Map<string, { boolean: boolean }>;
}

export class CqlEngine {
  private readonly executor: Executor;

  constructor(private readonly options: CqlEngineOptions) {
    const data: Record<string, Elm> = {};
    options.libraries.forEach((lib, i) => (data[`lib${i}`] = lib));
    const { id, version } = options.main.library.identifier;
    let library;
    try {
      library = new ElmRepository(data).resolve(id, version);
    } catch (err) {
      fail(unprocessable(`The ELM of library ${id} cannot be loaded: ${(err as Error).message}`, 'Measure.library'));
    }
    if (!library) fail(unprocessable(`Library ${id} could not be resolved from its ELM`, 'Measure.library'));
    const defined = new Set(Object.keys(library.expressions ?? {}));
    for (const name of options.expressions.keys()) {
      if (!defined.has(name)) {
        fail(unprocessable(`Library ${id} defines no expression "${name}" (named by the Measure)`, 'Measure.group'));
      }
    }
    const parameters: Record<string, unknown> = {};
    if (library.parameters?.[MEASUREMENT_PERIOD]) {
      parameters[MEASUREMENT_PERIOD] = new Interval(
        DateTime.parse(options.period.cqlStart),
        DateTime.parse(options.period.cqlEnd),
        true,
        true,
      );
    }
    this.executor = new Executor(library, options.valueSets, parameters);
  }

  /** Evaluates every record the prefetcher hands out; each patient's values go to `sink`. */
  async run(records: RecordPrefetcher, sink: SubjectSink): Promise<void> {
    const fhir = cqlFhir.PatientSource.FHIRv401();
    for (;;) {
      const source = new BatchSource(records, fhir, BATCH);
      let results;
      try {
        results = await this.executor.exec(source);
      } catch (err) {
        fail(unprocessable(`CQL evaluation failed: ${(err as Error).message}`, 'Measure.library'));
      }
      const byPatient = results.patientResults as Record<string, Record<string, unknown>>;
      for (const [patientId, result] of Object.entries(byPatient)) {
        const values = new Map<string, Evaluated>();
        for (const [name, { boolean }] of this.options.expressions) values.set(name, evaluated(result[name], boolean));
        sink({ patientId, values });
      }
      if (source.done) return;
      // Let other requests run between batches.
      await new Promise((r) => setImmediate(r));
    }
  }
}
