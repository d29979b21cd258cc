// Measure/$evaluate-measure (hl7.org/fhir/R4/measure-operation-evaluate-measure.html): evaluates a
// Measure for one patient, a Group's patients, or every patient the caller may read, and answers
// the MeasureReport; `persist=true` (POST) also stores it through the caller's repository. All data
// is read as the caller (records.ts), so access policies decide who is in the population. Free of HTTP.
import { badRequest, fail, unprocessable, type Resource } from '@hearth/core';
import { standardDefinition } from '../operations/definitions/standard.js';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import { compartmentMemberTypes } from '../search/compartments.js';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';
import { CqlEngine, type SubjectFailure, type SubjectValues } from './cql-engine.js';
import { FhirPathEngine, fhirPathTypes } from './fhirpath-engine.js';
import { declaredValueSets, findMeasure, loadLibraries, retrievedTypes } from './library.js';
import { expressionsOf, measureDefinition } from './model.js';
import { evaluateParameters, type EvaluateParameters } from './parameters.js';
import { compartmentRecords, readablePatientIds, RecordPrefetcher } from './records.js';
import { measureReport } from './report.js';
import { addSupplemental, addToGroup, newGroupTally, newSupplementalTally } from './tally.js';
import { ExpandedValueSets } from './value-sets.js';

type Json = Record<string, unknown>;

export interface MeasureDeps {
  search: SearchService;
  /** A value set's codes as this caller sees the terminology ($expand). */
  expandValueSet(url: string, repo: Repository): Promise<{ system?: string; code: string }[]>;
  /** How many patient records are read ahead of the engine (default 4). */
  readAhead?: number;
}

/** The patients to evaluate: the subject, a Group's active Patient members, or every readable Patient. */
async function subjectIds(
  deps: MeasureDeps,
  repo: Repository,
  fhirBase: string,
  subject: EvaluateParameters['subject'],
): Promise<string[]> {
  if (!subject) return readablePatientIds(deps.search, repo, fhirBase);
  if (subject.resourceType === 'Patient') {
    await repo.readResource('Patient', subject.id); // 404 when it does not exist or may not be read
    return [subject.id];
  }
  const group = (await repo.readResource('Group', subject.id)).resource as unknown as Json;
  const ids: string[] = [];
  for (const [i, m] of ((group.member as Json[] | undefined) ?? []).entries()) {
    if (m.inactive === true) continue;
    const ref = (m.entity as { reference?: string } | undefined)?.reference ?? '';
    const match = /^Patient\/([A-Za-z0-9\-.]{1,64})$/.exec(ref);
    if (!match) {
      fail(
        unprocessable(
          `Group/${subject.id}: member[${i}] is ${ref || 'not a reference'}; Hearth evaluates Groups of Patients`,
          'subject',
        ),
      );
    }
    ids.push(match[1]);
  }
  return [...new Set(ids)];
}

/** Evaluates the Measure and builds its MeasureReport (not stored). */
export async function evaluateMeasure(
  deps: MeasureDeps,
  repo: Repository,
  fhirBase: string,
  measure: Json,
  params: EvaluateParameters,
  now = new Date(),
): Promise<Resource> {
  const def = measureDefinition(measure);
  const expressions = expressionsOf(def);
  let engine: Pick<CqlEngine, 'run'>;
  let types: string[];
  if (def.language === 'cql') {
    const libraries = await loadLibraries(repo, measure);
    const valueSets = await ExpandedValueSets.load(declaredValueSets(libraries.all), (url) =>
      deps.expandValueSet(url, repo),
    );
    types = retrievedTypes(libraries.all);
    engine = new CqlEngine({
      libraries: libraries.all,
      main: libraries.main,
      valueSets,
      period: params.period,
      expressions,
    });
  } else {
    types = fhirPathTypes([...expressions.keys()], compartmentMemberTypes('Patient'));
    engine = new FhirPathEngine({ expressions, period: params.period });
  }

  const ids = await subjectIds(deps, repo, fhirBase, params.subject);
  const records = new RecordPrefetcher(ids, compartmentRecords(deps.search, repo, fhirBase, types), deps.readAhead);
  const groups = def.groups.map(newGroupTally);
  const supplemental = newSupplementalTally(def);
  const keepSubjects = params.reportType === 'subject-list';
  // One patient's evaluation that fails leaves that patient out of a population report (listed in
  // it); a single patient's report fails as a whole.
  const failures: SubjectFailure[] = [];
  const failed = params.reportType === 'individual' ? undefined : (f: SubjectFailure) => failures.push(f);
  const sink = ({ patientId, values }: SubjectValues) => {
    let inPopulation = false;
    def.groups.forEach((g, i) => {
      const members = addToGroup(g, groups[i], patientId, values, keepSubjects);
      if ((members.get('initial-population')?.size ?? 0) > 0) inPopulation = true;
    });
    // Supplemental data describe the initial population (a single patient's report: always).
    if (inPopulation || params.reportType === 'individual') addSupplemental(def, supplemental, values);
  };
  await engine.run(records, sink, failed);
  const subject = params.subject ? `${params.subject.resourceType}/${params.subject.id}` : undefined;
  return measureReport({
    measure,
    def,
    type: params.reportType,
    period: params.period,
    subject,
    groups,
    supplemental,
    failures,
    now,
  });
}

export function evaluateMeasureOperation(deps: MeasureDeps): OperationRegistration {
  return {
    definition: standardDefinition('Measure-evaluate-measure'),
    handler: async (input) => {
      const params = evaluateParameters(input);
      if (params.persist && input.method !== 'POST') {
        fail(badRequest('persist=true stores a MeasureReport: invoke $evaluate-measure with POST', 'persist'));
      }
      const { repo, fhirBase } = input.context;
      const measure = await findMeasure(repo, input.target.id, params.measure);
      const report = await evaluateMeasure(deps, repo, fhirBase, measure, params);
      if (!params.persist) return jsonResult(report);
      const saved = (await repo.createResource(report)).resource;
      return jsonResult(saved, 201, { location: `${fhirBase}MeasureReport/${String(saved.id)}` });
    },
  };
}
