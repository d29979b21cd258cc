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

/** A patient the engine could not evaluate (its data made the logic fail): left out of every population. */
export interface SubjectFailure {
  patientId: string;
  message: string;
}

/** How many patients one engine run takes before its results are read and dropped. */
const BATCH = 50;
export const MEASUREMENT_PERIOD = 'Measurement Period';

/** cql-execution's DataProvider over records already read. */
class RecordsSource {
  private index = 0;
  private current: PatientObject | undefined;

  constructor(
    private readonly records: Resource[][],
    private readonly fhir: FhirPatientSource,
  ) {
    this.current = this.load();
  }

  currentPatient(): PatientObject | undefined {
    return this.current;
  }

  nextPatient(): PatientObject | undefined {
    this.index++;
    this.current = this.load();
    return this.current;
  }

  private load(): PatientObject | undefined {
    const record = this.records[this.index];
    if (!record) return undefined;
    this.fhir.reset();
    this.fhir.loadBundles([recordBundle(record)]);
    return this.fhir.currentPatient();
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

  /**
   * Evaluates every record the prefetcher hands out, in batches; each patient's values go to
   * `sink`. When a batch fails, its patients are evaluated one by one: a patient whose data makes
   * the logic fail goes to `failed` (or, without `failed`, the whole evaluation is a 422).
   */
  async run(records: RecordPrefetcher, sink: SubjectSink, failed?: (failure: SubjectFailure) => void): Promise<void> {
    fhirSource ??= cqlFhir.PatientSource.FHIRv401();
    const fhir = fhirSource;
    for (;;) {
      const batch: Resource[][] = [];
      let next;
      while (batch.length < BATCH && (next = await records.take())) {
        if (next.record) batch.push(next.record); // unreadable by the caller: not part of the population
      }
      if (batch.length === 0) return;
      try {
        this.collect(await this.executor.exec(new RecordsSource(batch, fhir)), sink);
      } catch (err) {
        if (batch.length === 1) {
          if (!failed) this.fail(batch[0], err);
          failed({ patientId: String(batch[0][0].id), message: (err as Error).message });
        }
        for (const record of batch.length > 1 ? batch : []) {
          try {
            this.collect(await this.executor.exec(new RecordsSource([record], fhir)), sink);
          } catch (e) {
            if (!failed) this.fail(record, e);
            failed({ patientId: String(record[0].id), message: (e as Error).message });
          }
        }
      }
      // Let other requests run between batches.
      await new Promise((r) => setImmediate(r));
    }
  }

  private collect(results: { patientResults: unknown }, sink: SubjectSink): void {
    const byPatient = results.patientResults as Record<string, Record<string, unknown>>;
    for (const [patientId, result] of Object.entries(byPatient)) {
      const values = new Map<string, Evaluated>();
      for (const [name, { boolean }] of this.options.expressions) values.set(name, evaluated(result[name], boolean));
      sink({ patientId, values });
    }
  }

  private fail(record: Resource[], err: unknown): never {
    fail(
      unprocessable(
        `CQL evaluation failed for Patient/${String(record[0].id)}: ${(err as Error).message}`,
        'Measure.library',
      ),
    );
  }
}

/** cql-exec-fhir's PatientSource parses its model info when made: one per process (its use is synchronous). */
let fhirSource: FhirPatientSource | undefined;
