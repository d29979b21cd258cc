// Runs a Measure's CQL (as ELM JSON) with cql-execution, the cqframework engine for JavaScript, over
// the records Hearth reads as the caller, as cql-exec-fhir's FHIR 4.0.1 objects (cql-data.ts).
// Patients are evaluated one at a time, each in its own PatientContext, and only the expressions
// the Measure names (and what they reference) are evaluated: Executor.exec would evaluate every
// definition of the main library and keep every patient's results until the end. Between two
// patients the engine yields to the event loop, so the database reads of the next batch (and
// other requests) progress while a long evaluation runs.
import { fail, unprocessable, type Resource } from '@hearth/core';
import {
  DateTime,
  Interval,
  PatientContext,
  Repository as ElmRepository,
  type Library,
  type TerminologyProvider,
} from 'cql-execution';
import { patientObject } from './cql-data.js';
import type { Elm } from './library.js';
import type { PatientRecord } from './records.js';
import { evaluated, type Evaluated } from './values.js';

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

/** What runs the criteria over batches of records: the CQL engine or the FHIRPath one. */
export interface MeasureEngine {
  run(
    batches: AsyncIterable<PatientRecord[]>,
    sink: SubjectSink,
    failed?: (failure: SubjectFailure) => void,
  ): Promise<void>;
}

export const MEASUREMENT_PERIOD = 'Measurement Period';

/** Lets the event loop run (I/O, other requests) between two patients. */
export const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * The main library resolved with its includes by cql-execution (its expression trees): built once
 * per set of library versions (measure-cache.ts keeps it), shared by evaluations, which keep their
 * state in their own contexts.
 */
export function resolveLibrary(libraries: Elm[], main: Elm): Library {
  const data: Record<string, Elm> = {};
  libraries.forEach((lib, i) => (data[`lib${i}`] = lib));
  const { id, version } = main.library.identifier;
  let library: Library | undefined;
  try {
    library = new ElmRepository(data).resolve(id, version);
  } catch (err) {
    fail(unprocessable(`The ELM of library ${id} cannot be loaded: ${(err as Error).message}`, 'Measure.library'));
  }
  if (!library) fail(unprocessable(`Library ${id} could not be resolved from its ELM`, 'Measure.library'));
  return library;
}

export interface CqlEngineOptions {
  library: Library;
  valueSets: TerminologyProvider;
  period: { cqlStart: string; cqlEnd: string };
  /** The expressions to read per patient, and whether each is read as a boolean-basis population. */
  expressions: Map<string, { boolean: boolean }>;
  /** The evaluation's Now(), the same for every patient. */
  now: Date;
}

export class CqlEngine implements MeasureEngine {
  private readonly parameters: Record<string, unknown> = {};
  private readonly executionDateTime: DateTime;

  constructor(private readonly options: CqlEngineOptions) {
    const { library } = options;
    const id = library.name;
    for (const name of options.expressions.keys()) {
      const def = library.expressions[name] as { context?: string } | undefined;
      if (!def) {
        fail(unprocessable(`Library ${id} defines no expression "${name}" (named by the Measure)`, 'Measure.group'));
      }
      if (def.context && def.context !== 'Patient') {
        fail(
          unprocessable(
            `Library ${id}: expression "${name}" is in context ${def.context}; Hearth evaluates Patient context criteria`,
            'Measure.group',
          ),
        );
      }
    }
    if (library.parameters?.[MEASUREMENT_PERIOD]) {
      this.parameters[MEASUREMENT_PERIOD] = new Interval(
        DateTime.parse(options.period.cqlStart),
        DateTime.parse(options.period.cqlEnd),
        true,
        true,
      );
    }
    this.executionDateTime = DateTime.fromJSDate(options.now);
  }

  /**
   * Evaluates every record of every batch; each patient's values go to `sink`. A patient whose
   * data makes the logic fail goes to `failed` (or, without `failed`, the whole evaluation is a 422).
   */
  async run(
    batches: AsyncIterable<PatientRecord[]>,
    sink: SubjectSink,
    failed?: (failure: SubjectFailure) => void,
  ): Promise<void> {
    for await (const batch of batches) {
      for (const record of batch) {
        let values: Map<string, Evaluated>;
        try {
          values = await this.evaluate(record);
        } catch (err) {
          if (!failed) this.fail(record, err);
          failed({ patientId: String(record[0].id), message: (err as Error).message });
          continue;
        } finally {
          await yieldToLoop();
        }
        sink({ patientId: String(record[0].id), values });
      }
    }
  }

  private async evaluate(record: Resource[]): Promise<Map<string, Evaluated>> {
    const { library } = this.options;
    const ctx = new PatientContext(
      library,
      patientObject(record),
      this.options.valueSets,
      this.parameters,
      this.executionDateTime,
    );
    const values = new Map<string, Evaluated>();
    for (const [name, { boolean }] of this.options.expressions) {
      values.set(name, evaluated(await library.expressions[name].execute(ctx), boolean));
    }
    return values;
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
