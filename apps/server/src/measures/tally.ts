// Population membership and counts, subject by subject. The counting convention is the one of the
// published eCQM test reports (cqf-ruler): each population is counted within the one above it and
// without the members its exclusions and exceptions took out (docs/measures.md, "Counting"):
//   proportion: denominator = (denominator ∩ initial population) − exclusions − exceptions;
//               exclusions counted within the denominator; exceptions only for members not in the
//               numerator; numerator = numerator ∩ that denominator − numerator exclusions.
//   ratio:      denominator and numerator each within the initial population, less their exclusions.
//   continuous variable: measure population within the initial population, less its exclusions;
//               the measure observations of its members are aggregated into the score.
import type { GroupDef, MeasureDef } from './model.js';
import { categoryKey, type CodeableConcept, type Evaluated } from './values.js';

export type Members = Set<string>;

export interface StratumTally {
  value: CodeableConcept;
  counts: Map<string, number>;
  observations: number[];
}

export interface GroupTally {
  counts: Map<string, number>;
  /** Patients per population code (for subject-list reports). */
  subjects: Map<string, Set<string>>;
  observations: number[];
  /** Per stratifier: its strata by key. */
  strata: Map<string, StratumTally>[];
}

export interface SupplementalTally {
  /** Per supplemental data element: its values by key, with how many subjects had each. */
  values: Map<string, { value: CodeableConcept; count: number }>[];
}

const NONE: CodeableConcept = { text: 'null' };

/** The final members of each population code for one subject of a group. */
export function groupMembers(group: GroupDef, patientId: string, values: Map<string, Evaluated>): Map<string, Members> {
  const raw = new Map<string, Members>();
  for (const p of group.populations) {
    if (p.code === 'measure-observation') continue;
    const v = values.get(p.expression) as Evaluated;
    const members = Array.isArray(v.members) ? new Set(v.members) : new Set(v.members ? [`Patient/${patientId}`] : []);
    raw.set(p.code, members);
  }
  const get = (code: string): Members => raw.get(code) ?? new Set();
  const and = (a: Members, b: Members): Members => new Set([...a].filter((x) => b.has(x)));
  const minus = (a: Members, b: Members): Members => new Set([...a].filter((x) => !b.has(x)));
  const ip = get('initial-population');
  const out = new Map<string, Members>([['initial-population', ip]]);
  switch (group.scoring) {
    case 'proportion': {
      const den0 = and(get('denominator'), ip);
      const denex = and(get('denominator-exclusion'), den0);
      const kept = minus(den0, denex);
      const numer0 = and(get('numerator'), kept);
      const numex = and(get('numerator-exclusion'), numer0);
      const denexcep = minus(and(get('denominator-exception'), kept), numer0);
      out.set('denominator', minus(kept, denexcep));
      out.set('denominator-exclusion', denex);
      out.set('denominator-exception', denexcep);
      out.set('numerator', minus(numer0, numex));
      out.set('numerator-exclusion', numex);
      break;
    }
    case 'ratio': {
      const den0 = and(get('denominator'), ip);
      const denex = and(get('denominator-exclusion'), den0);
      const numer0 = and(get('numerator'), ip);
      const numex = and(get('numerator-exclusion'), numer0);
      out.set('denominator', minus(den0, denex));
      out.set('denominator-exclusion', denex);
      out.set('numerator', minus(numer0, numex));
      out.set('numerator-exclusion', numex);
      break;
    }
    case 'continuous-variable': {
      const mp0 = and(get('measure-population'), ip);
      const mpex = and(get('measure-population-exclusion'), mp0);
      out.set('measure-population', minus(mp0, mpex));
      out.set('measure-population-exclusion', mpex);
      break;
    }
    case 'cohort':
      break;
  }
  // Only the codes the group declares are reported.
  const declared = new Set(group.populations.map((p) => p.code));
  for (const code of out.keys()) if (!declared.has(code)) out.delete(code);
  return out;
}

export function newGroupTally(group: GroupDef): GroupTally {
  return {
    counts: new Map(group.populations.filter((p) => p.code !== 'measure-observation').map((p) => [p.code, 0])),
    subjects: new Map(),
    observations: [],
    strata: group.stratifiers.map(() => new Map()),
  };
}

/** The stratum keys of each member: per-resource ('true'/'false') when the stratifier lists resources, else the subject's values. */
function strataOf(
  value: Evaluated,
  members: Set<string>,
  booleanBasis: boolean,
): { byMember: (m: string) => CodeableConcept[] } {
  if (!booleanBasis && Array.isArray(value.members) && value.members.some((m) => members.has(m))) {
    const inStratum = new Set(value.members);
    return { byMember: (m) => [{ text: inStratum.has(m) ? 'true' : 'false' }] };
  }
  const categories = value.categories.length ? value.categories : [NONE];
  return { byMember: () => categories };
}

/** Adds one subject's results to a group's tally. */
export function addToGroup(
  group: GroupDef,
  tally: GroupTally,
  patientId: string,
  values: Map<string, Evaluated>,
  keepSubjects: boolean,
): Map<string, Members> {
  const members = groupMembers(group, patientId, values);
  for (const [code, set] of members) {
    tally.counts.set(code, (tally.counts.get(code) ?? 0) + set.size);
    if (keepSubjects && set.size > 0) {
      const subjects = tally.subjects.get(code) ?? new Set<string>();
      subjects.add(`Patient/${patientId}`);
      tally.subjects.set(code, subjects);
    }
  }
  const observed = observationsOf(group, values, members);
  tally.observations.push(...observed);
  const all = new Set([...members.values()].flatMap((s) => [...s]));
  group.stratifiers.forEach((s, i) => {
    const { byMember } = strataOf(values.get(s.expression) as Evaluated, all, group.booleanBasis);
    const strata = tally.strata[i];
    for (const member of all) {
      for (const value of byMember(member)) {
        const key = categoryKey(value);
        let stratum = strata.get(key);
        if (!stratum) {
          stratum = { value, counts: new Map([...tally.counts.keys()].map((c) => [c, 0])), observations: [] };
          strata.set(key, stratum);
        }
        for (const [code, set] of members) {
          if (set.has(member)) stratum.counts.set(code, (stratum.counts.get(code) ?? 0) + 1);
        }
        if (group.booleanBasis) stratum.observations.push(...observed);
      }
    }
  });
  return members;
}

/** A continuous-variable group's observations for this subject: only members of the measure population have one. */
function observationsOf(group: GroupDef, values: Map<string, Evaluated>, members: Map<string, Members>): number[] {
  const observation = group.populations.find((p) => p.code === 'measure-observation');
  if (!observation || (members.get('measure-population')?.size ?? 0) === 0) return [];
  return (values.get(observation.expression) as Evaluated).numbers;
}

export function newSupplementalTally(def: MeasureDef): SupplementalTally {
  return { values: def.supplemental.map(() => new Map()) };
}

export function addSupplemental(def: MeasureDef, tally: SupplementalTally, values: Map<string, Evaluated>): void {
  def.supplemental.forEach((s, i) => {
    const v = values.get(s.expression) as Evaluated;
    for (const value of v.categories.length ? v.categories : [NONE]) {
      const key = categoryKey(value);
      const entry = tally.values[i].get(key) ?? { value, count: 0 };
      entry.count++;
      tally.values[i].set(key, entry);
    }
  });
}

/** The aggregate of a continuous variable's observations (cqfm-aggregateMethod; average when not given). */
export function aggregate(method: string | undefined, xs: number[]): number | undefined {
  if (xs.length === 0) return method === 'count' ? 0 : undefined;
  switch (method ?? 'average') {
    case 'sum':
      return xs.reduce((a, b) => a + b, 0);
    case 'count':
      return xs.length;
    case 'min':
      return Math.min(...xs);
    case 'max':
      return Math.max(...xs);
    case 'median': {
      const s = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(s.length / 2);
      return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
    }
    default:
      return xs.reduce((a, b) => a + b, 0) / xs.length;
  }
}

/** The group's (or stratum's) score: a proportion or ratio of the final counts, or the aggregate. */
export function score(group: GroupDef, counts: Map<string, number>, observations: number[]): number | undefined {
  if (group.scoring === 'proportion' || group.scoring === 'ratio') {
    const den = counts.get('denominator') ?? 0;
    return den > 0 ? (counts.get('numerator') ?? 0) / den : undefined;
  }
  if (group.scoring === 'continuous-variable') {
    const method = group.populations.find((p) => p.code === 'measure-observation')?.aggregate;
    return aggregate(method, observations);
  }
  return undefined;
}
