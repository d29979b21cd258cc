// The MeasureReport (hl7.org/fhir/R4/measurereport.html) of an evaluation: populations with their
// counts (and, for subject-list, a contained List of the subjects), the score, strata, and the
// supplemental data as contained Observations (one per value, with its count in a summary).
import type { Resource } from '@hearth/core';
import type { SubjectFailure } from './cql-engine.js';
import type { MeasureDef } from './model.js';
import type { ReportType } from './parameters.js';
import { score, type GroupTally, type SupplementalTally } from './tally.js';

type Json = Record<string, unknown>;

const POPULATION_SYSTEM = 'http://terminology.hl7.org/CodeSystem/measure-population';
const MEASURE_INFO = 'http://hl7.org/fhir/StructureDefinition/cqf-measureInfo';
/** Points at the contained OperationOutcome listing the patients left out because their evaluation failed. */
export const EVALUATION_ERRORS = 'https://hearth.dev/fhir/StructureDefinition/measurereport-evaluation-errors';

export interface ReportInput {
  measure: Json;
  def: MeasureDef;
  type: ReportType;
  period: { start: string; end: string };
  subject?: string;
  groups: GroupTally[];
  supplemental: SupplementalTally;
  failures?: SubjectFailure[];
  now: Date;
}

function canonicalOf(measure: Json): string {
  if (typeof measure.url === 'string')
    return measure.version ? `${measure.url}|${String(measure.version)}` : measure.url;
  return `Measure/${String(measure.id)}`;
}

function populationCode(code: string): Json {
  return { coding: [{ system: POPULATION_SYSTEM, code }] };
}

function withScore(target: Json, value: number | undefined): void {
  if (value !== undefined) target.measureScore = { value: Math.round(value * 1e6) / 1e6 };
}

export function measureReport(input: ReportInput): Resource {
  const { def, measure } = input;
  const contained: Json[] = [];
  const measureCanonical = canonicalOf(measure);
  const group = def.groups.map((g, gi) => {
    const tally = input.groups[gi];
    const population = g.populations
      .filter((p) => p.code !== 'measure-observation')
      .map((p) => {
        const out: Json = { code: populationCode(p.code), count: tally.counts.get(p.code) ?? 0 };
        if (p.id) out.id = p.id;
        if (input.type === 'subject-list') {
          const id = `subjects-${gi}-${p.code}`;
          const subjects = [...(tally.subjects.get(p.code) ?? [])].sort();
          contained.push({
            resourceType: 'List',
            id,
            status: 'current',
            mode: 'snapshot',
            title: `${p.code} subjects`,
            entry: subjects.map((reference) => ({ item: { reference } })),
          });
          out.subjectResults = { reference: `#${id}` };
        }
        return out;
      });
    const out: Json = { population };
    if (g.id) out.id = g.id;
    if (g.code) out.code = g.code;
    withScore(out, score(g, tally.counts, tally.observations));
    if (g.stratifiers.length) {
      out.stratifier = g.stratifiers.map((s, si) => {
        const strata = [...tally.strata[si].values()].sort((a, b) =>
          JSON.stringify(a.value).localeCompare(JSON.stringify(b.value)),
        );
        const stratifier: Json = {
          stratum: strata.map((st) => {
            const stratum: Json = {
              value: st.value,
              population: [...st.counts].map(([code, count]) => ({ code: populationCode(code), count })),
            };
            withScore(stratum, score(g, st.counts, st.observations));
            return stratum;
          }),
        };
        if (s.id) stratifier.id = s.id;
        stratifier.code = s.code ? [s.code] : [{ text: s.expression }];
        return stratifier;
      });
    }
    return out;
  });

  const evaluated: Json[] = [];
  def.supplemental.forEach((s, si) => {
    const populationId = s.id ?? s.expression;
    let n = 0;
    for (const { value, count } of input.supplemental.values[si].values()) {
      const id = `sde-${si}-${n++}`;
      const info = {
        url: MEASURE_INFO,
        extension: [
          { url: 'measure', valueCanonical: measureCanonical },
          { url: 'populationId', valueString: populationId },
        ],
      };
      // Individual: the patient's value; summary and subject-list: each value with how many had it.
      const observation: Json =
        input.type === 'individual'
          ? { code: { text: populationId }, valueCodeableConcept: value }
          : { code: value, valueInteger: count };
      contained.push({ resourceType: 'Observation', id, extension: [info], status: 'final', ...observation });
      evaluated.push({ reference: `#${id}` });
    }
  });

  const report: Json = {
    resourceType: 'MeasureReport',
    status: 'complete',
    type: input.type,
    measure: measureCanonical,
    date: input.now.toISOString(),
    period: { start: input.period.start, end: input.period.end },
    group,
  };
  if (input.failures?.length) {
    contained.push({
      resourceType: 'OperationOutcome',
      id: 'evaluation-errors',
      issue: input.failures.map((f) => ({
        severity: 'error',
        code: 'processing',
        details: { text: `Patient/${f.patientId} left out: ${f.message}` },
        expression: [`Patient/${f.patientId}`],
      })),
    });
    report.extension = [{ url: EVALUATION_ERRORS, valueReference: { reference: '#evaluation-errors' } }];
  }
  if (input.subject) report.subject = { reference: input.subject };
  if (measure.improvementNotation) report.improvementNotation = measure.improvementNotation;
  if (contained.length) report.contained = contained;
  if (evaluated.length) report.evaluatedResource = evaluated;
  return report as unknown as Resource;
}
