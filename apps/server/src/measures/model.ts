// What Hearth reads of a Measure (hl7.org/fhir/R4/measure.html): scoring, population basis,
// groups with their populations and stratifiers, supplemental data; checked up front so that a
// Measure Hearth cannot evaluate is a 422 naming the element, before any patient is read.
import { fail, unprocessable } from '@hearth/core';

type Json = Record<string, unknown>;

export type Scoring = 'proportion' | 'ratio' | 'cohort' | 'continuous-variable';
export type Language = 'cql' | 'fhirpath';

export interface Criteria {
  /** The CQL expression name, or the FHIRPath text. */
  expression: string;
  /** Where it is in the Measure, for error messages. */
  where: string;
}

export interface PopulationDef extends Criteria {
  code: string;
  id?: string;
  /** cqfm-aggregateMethod of a measure-observation (sum, average, min, max, count, median). */
  aggregate?: string;
}

export interface StratifierDef extends Criteria {
  id?: string;
  code?: unknown;
}

export interface GroupDef {
  id?: string;
  code?: unknown;
  scoring: Scoring;
  /** True: one result per patient; false: the populations are lists of resources (Encounters…). */
  booleanBasis: boolean;
  populations: PopulationDef[];
  stratifiers: StratifierDef[];
}

export interface SupplementalDef extends Criteria {
  id?: string;
  code?: unknown;
}

export interface MeasureDef {
  language: Language;
  groups: GroupDef[];
  supplemental: SupplementalDef[];
}

const EXT = 'http://hl7.org/fhir/us/cqfmeasures/StructureDefinition/';
const CQL_LANGUAGES = new Set(['text/cql', 'text/cql.identifier', 'text/cql-identifier', 'text/cql.name']);

/** The population codes each scoring allows (hl7.org/fhir/R4/valueset-measure-population.html). */
const ALLOWED: Record<Scoring, string[]> = {
  proportion: [
    'initial-population',
    'denominator',
    'denominator-exclusion',
    'denominator-exception',
    'numerator',
    'numerator-exclusion',
  ],
  ratio: ['initial-population', 'denominator', 'denominator-exclusion', 'numerator', 'numerator-exclusion'],
  cohort: ['initial-population'],
  'continuous-variable': [
    'initial-population',
    'measure-population',
    'measure-population-exclusion',
    'measure-observation',
  ],
};
const REQUIRED: Record<Scoring, string[]> = {
  proportion: ['initial-population', 'denominator', 'numerator'],
  ratio: ['initial-population', 'denominator', 'numerator'],
  cohort: ['initial-population'],
  'continuous-variable': ['initial-population', 'measure-population', 'measure-observation'],
};

function extension(element: Json | undefined, name: string): Json | undefined {
  return ((element?.extension as Json[] | undefined) ?? []).find((e) => e.url === `${EXT}${name}`);
}

function codeOf(concept: unknown): string | undefined {
  const coding = (concept as { coding?: { code?: string }[] } | undefined)?.coding;
  return coding?.find((c) => c.code)?.code;
}

export function measureDefinition(measure: Json): MeasureDef {
  const languages = new Set<Language>();
  const criteria = (element: Json, where: string): Criteria => {
    const c = element.criteria as Json | undefined;
    if (!c || typeof c.expression !== 'string' || c.expression === '') {
      fail(unprocessable(`${where}.criteria needs an expression`, `${where}.criteria`));
    }
    const language = String(c.language);
    if (CQL_LANGUAGES.has(language)) languages.add('cql');
    else if (language === 'text/fhirpath') languages.add('fhirpath');
    else {
      fail(
        unprocessable(
          `${where}.criteria.language ${language} is not supported (text/cql.identifier or text/fhirpath)`,
          `${where}.criteria.language`,
        ),
      );
    }
    return { expression: c.expression, where };
  };

  const measureScoring = codeOf(measure.scoring);
  const measureBasis = extension(measure, 'cqfm-populationBasis')?.valueCode as string | undefined;
  const groups = ((measure.group as Json[] | undefined) ?? []).map((g, i): GroupDef => {
    const where = `Measure.group[${i}]`;
    const scoring = (codeOf(extension(g, 'cqfm-scoring')?.valueCodeableConcept) ?? measureScoring) as Scoring;
    if (!scoring) fail(unprocessable('Measure.scoring is missing', 'Measure.scoring'));
    if (!(scoring in ALLOWED)) {
      fail(
        unprocessable(`Scoring ${scoring} is not supported (${Object.keys(ALLOWED).join(', ')})`, 'Measure.scoring'),
      );
    }
    const basis = (extension(g, 'cqfm-populationBasis')?.valueCode as string | undefined) ?? measureBasis ?? 'boolean';
    const populations = ((g.population as Json[] | undefined) ?? []).map((p, j): PopulationDef => {
      const at = `${where}.population[${j}]`;
      const code = codeOf(p.code);
      if (!code || !ALLOWED[scoring].includes(code)) {
        fail(
          unprocessable(
            `${at}.code ${code ?? '(none)'} is not a population of ${scoring} scoring (${ALLOWED[scoring].join(', ')})`,
            `${at}.code`,
          ),
        );
      }
      const aggregate = extension(p, 'cqfm-aggregateMethod')?.valueCode as string | undefined;
      return { ...criteria(p, at), code, id: p.id as string | undefined, aggregate };
    });
    for (const code of REQUIRED[scoring]) {
      if (!populations.some((p) => p.code === code)) {
        fail(
          unprocessable(`${where} has no ${code} population, which ${scoring} scoring needs`, `${where}.population`),
        );
      }
    }
    const stratifiers = ((g.stratifier as Json[] | undefined) ?? []).map((s, j): StratifierDef => {
      const at = `${where}.stratifier[${j}]`;
      if (s.component) fail(unprocessable(`${at}: stratifier components are not supported`, `${at}.component`));
      return { ...criteria(s, at), id: s.id as string | undefined, code: s.code };
    });
    if (scoring === 'continuous-variable' && basis !== 'boolean') {
      fail(
        unprocessable(
          `${where}: continuous-variable scoring is supported with a boolean population basis only (this one is ${basis})`,
          `${where}`,
        ),
      );
    }
    return {
      id: g.id as string | undefined,
      code: g.code,
      scoring,
      booleanBasis: basis === 'boolean',
      populations,
      stratifiers,
    };
  });
  if (groups.length === 0) fail(unprocessable('The Measure has no group to evaluate', 'Measure.group'));
  const supplemental = ((measure.supplementalData as Json[] | undefined) ?? []).map((s, i): SupplementalDef => ({
    ...criteria(s, `Measure.supplementalData[${i}]`),
    id: s.id as string | undefined,
    code: s.code,
  }));
  if (languages.size > 1) {
    fail(unprocessable('A Measure must use one language for all its criteria (CQL or FHIRPath)', 'Measure.group'));
  }
  return { language: languages.has('fhirpath') ? 'fhirpath' : 'cql', groups, supplemental };
}

/** Every expression to read per patient, with whether it is a boolean-basis population. */
export function expressionsOf(def: MeasureDef): Map<string, { boolean: boolean }> {
  const out = new Map<string, { boolean: boolean }>();
  for (const g of def.groups) {
    for (const p of g.populations) {
      // A measure observation is read for its numbers, never as a membership.
      const boolean = p.code === 'measure-observation' ? false : g.booleanBasis;
      out.set(p.expression, { boolean: (out.get(p.expression)?.boolean ?? false) || boolean });
    }
    for (const s of g.stratifiers) if (!out.has(s.expression)) out.set(s.expression, { boolean: false });
  }
  for (const s of def.supplemental) if (!out.has(s.expression)) out.set(s.expression, { boolean: false });
  return out;
}
