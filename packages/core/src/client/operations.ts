/**
 * Typed parameters and outputs of FHIR operations the SDK calls: ConceptMap/$translate,
 * Measure/$evaluate-measure and the Bulk Data `$import` kick-off. Pure builders and readers,
 * used by HearthClient (client.ts) and testable alone.
 */
import type { CodeableConcept, Coding, ConceptMap, Parameters, ParametersParameter } from '@hearth/fhir-types';

/** ConceptMap/$translate input (hl7.org/fhir/R4/conceptmap-operation-translate.html). */
export interface ConceptMapTranslateParams {
  /** Translate with this stored ConceptMap (ConceptMap/{id}/$translate) instead of by url. */
  readonly id?: string;
  readonly url?: string;
  readonly conceptMap?: ConceptMap;
  readonly conceptMapVersion?: string;
  readonly code?: string;
  readonly system?: string;
  readonly version?: string;
  /** The value set the source code is from. */
  readonly source?: string;
  readonly coding?: Coding;
  readonly codeableConcept?: CodeableConcept;
  /** The value set to translate into. */
  readonly target?: string;
  /** The code system to translate into. */
  readonly targetsystem?: string;
  readonly reverse?: boolean;
}

/** One candidate of $translate's answer. */
export interface ConceptMapTranslateMatch {
  /** relatedto, equivalent, equal, wider, subsumes, narrower, specializes, inexact, unmatched, disjoint. */
  equivalence?: string;
  concept?: Coding;
  /** The canonical of the ConceptMap that gave it. */
  source?: string;
  product?: { element?: string; concept?: Coding }[];
}

/** $translate's answer: whether any match was found, why not, and the matches. */
export interface ConceptMapTranslateOutput {
  result: boolean;
  message?: string;
  match: ConceptMapTranslateMatch[];
}

/** One input of a Bulk Data import manifest: NDJSON of one type at a URL (or a Binary of this server). */
export interface BulkImportInput {
  readonly type: string;
  /** An https URL, or `Binary/{id}` of content already stored in Hearth. */
  readonly url: string;
}

/** The Bulk Data `$import` manifest (its JSON form). */
export interface BulkImportManifest {
  readonly inputFormat?: 'application/fhir+ndjson';
  /** Where the data comes from (the exporting server). */
  readonly inputSource?: string;
  readonly storageDetail?: { readonly type: 'https' | 'binary' | string };
  readonly input: readonly BulkImportInput[];
}

function part(name: string, value: unknown): ParametersParameter | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  switch (name) {
    case 'coding':
      return { name, valueCoding: value as Coding };
    case 'codeableConcept':
      return { name, valueCodeableConcept: value as CodeableConcept };
    case 'conceptMap':
      return { name, resource: value as ConceptMap };
    case 'reverse':
      return { name, valueBoolean: value as boolean };
    case 'code':
      return { name, valueCode: value as string };
    case 'url':
    case 'system':
    case 'source':
    case 'target':
    case 'targetsystem':
      return { name, valueUri: value as string };
    default:
      return { name, valueString: String(value) };
  }
}

/** The Parameters resource of a $translate request (all but `id`, which goes in the path). */
export function translateParameters(params: ConceptMapTranslateParams): Parameters {
  const parameter = Object.entries(params)
    .filter(([name]) => name !== 'id')
    .map(([name, value]) => part(name, value))
    .filter((p): p is ParametersParameter => p !== undefined);
  return { resourceType: 'Parameters', parameter };
}

/** Reads $translate's Parameters answer. */
export function readTranslateOutput(output: Parameters): ConceptMapTranslateOutput {
  const parameters = output.parameter ?? [];
  const result = parameters.find((p) => p.name === 'result')?.valueBoolean === true;
  const message = parameters.find((p) => p.name === 'message')?.valueString;
  const match = parameters
    .filter((p) => p.name === 'match')
    .map((p) => {
      const parts = p.part ?? [];
      const one = (name: string) => parts.find((x) => x.name === name);
      const products = parts
        .filter((x) => x.name === 'product')
        .map((x) => ({
          element: x.part?.find((y) => y.name === 'element')?.valueUri,
          concept: x.part?.find((y) => y.name === 'concept')?.valueCoding,
        }));
      const m: ConceptMapTranslateMatch = {};
      const equivalence = one('equivalence')?.valueCode;
      if (equivalence !== undefined) m.equivalence = equivalence;
      const concept = one('concept')?.valueCoding;
      if (concept !== undefined) m.concept = concept;
      const source = one('source')?.valueUri;
      if (source !== undefined) m.source = source;
      if (products.length > 0) m.product = products;
      return m;
    });
  return { result, ...(message !== undefined ? { message } : {}), match };
}
