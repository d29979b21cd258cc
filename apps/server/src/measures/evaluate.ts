// Measure/$evaluate-measure (hl7.org/fhir/R4/measure-operation-evaluate-measure.html): evaluates a
// Measure for one patient, a Group's patients, or every patient the caller may read, and answers
// the MeasureReport; `persist=true` (POST) also stores it through the caller's repository. All data
// is read as the caller (records.ts), so access policies decide who is in the population. Patients
// are read and evaluated a batch at a time, so memory stays bounded whatever their number. Free of HTTP.
import { badRequest, fail, unprocessable, type Resource } from '@hearth/core';
import { standardDefinition } from '../operations/definitions/standard.js';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import { compartmentMemberTypes } from '../search/compartments.js';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';
import { CqlEngine, type MeasureEngine, type SubjectFailure, type SubjectValues } from './cql-engine.js';
import { FhirPathEngine, fhirPathTypes } from './fhirpath-engine.js';
import { findMeasure } from './library.js';
import { expressionsOf, measureDefinition } from './model.js';
import { evaluateParameters, type EvaluateParameters } from './parameters.js';
import { prepareLogic, typeQueries, type PrepareDeps } from './prepare.js';
import { compartmentTypes, patientBatches, recordBatches, type RecordSource, type TypeQuery } from './records.js';
import { measureReport } from './report.js';
import { addSupplemental, addToGroup, newGroupTally, newSupplementalTally } from './tally.js';

type Json = Record<string, unknown>;

export interface MeasureDeps extends PrepareDeps {
  search: SearchService;
  /** The Patient compartments a resource is in, as stored (search's patientCompartmentsOf). */
  patientCompartments(resource: Resource): string[];
  /** The token parameter indexing one element of a type in a project (search's elementTokenParam). */
  elementTokenParam(resourceType: string, element: string, projectId: string): Promise<string | undefined>;
  /** Patients read and evaluated per batch (default records.ts BATCH). */
  batchSize?: number;
}

/** The patients named by the subject: the Patient, or a Group's active Patient members. */
async function subjectIds(repo: Repository, subject: NonNullable<EvaluateParameters['subject']>): Promise<string[]> {
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
  let engine: MeasureEngine;
  let types: TypeQuery[];
  if (def.language === 'cql') {
    const logic = await prepareLogic(deps, repo, measure);
    engine = new CqlEngine({
      library: logic.library,
      valueSets: logic.valueSets,
      period: params.period,
      expressions,
      now,
    });
    types = await typeQueries(logic, (type, element) => deps.elementTokenParam(type, element, repo.scope.projectId));
  } else {
    types = fhirPathTypes([...expressions.keys()], compartmentMemberTypes('Patient')).map((type) => ({ type }));
    engine = new FhirPathEngine({ expressions, period: params.period });
  }

  const source: RecordSource = {
    search: deps.search,
    repo,
    fhirBase,
    patientCompartments: (r) => deps.patientCompartments(r),
  };
  const ids = params.subject ? await subjectIds(repo, params.subject) : undefined;
  const batches = recordBatches(source, compartmentTypes(repo, types), patientBatches(source, ids, deps.batchSize));
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
  await engine.run(batches, sink, failed);
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
