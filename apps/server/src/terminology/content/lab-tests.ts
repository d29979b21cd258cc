/**
 * Terminology part `lab-tests`: a LOINC subset of common orderable lab tests and panels (CBC,
 * basic and comprehensive metabolic panels, hepatic panel, lipid panels, HbA1c, TSH, free T4,
 * urinalysis, coagulation, …) and the analytes they report, from the shared catalogue in
 * @hearth/core (`LAB_TESTS`, `LAB_ANALYTES`), with the value sets the lab screens use.
 *
 * Licence basis: LOINC codes and long common names are copyright © Regenstrief Institute, Inc.
 * and the LOINC Committee, available at no cost under the license at https://loinc.org/license/,
 * which allows redistribution with this notice.
 *
 * Displays are LOINC long common names; the names clients commonly send for the same codes (older
 * long names, as Synthea does; the component name, e.g. "Glucose") are designations, so a stored
 * Coding with one of them is still judged valid. `content: 'fragment'` keeps every other LOINC
 * code valid.
 */
import {
  LAB_ANALYTES,
  LAB_ANALYTES_VALUE_SET,
  LAB_TESTS,
  LAB_TASK_SYSTEM,
  LAB_TESTS_VALUE_SET,
  LOINC,
  REVIEW_RESULT,
  type Bundle,
  type CodeSystem,
  type Resource,
  type ValueSet,
} from '@hearth/core';

type Concept = NonNullable<CodeSystem['concept']>[number];

function concepts(): Concept[] {
  const byCode = new Map<string, Concept>();
  const add = (code: string, display: string, synonyms: readonly string[] = []) => {
    const concept = byCode.get(code) ?? { code, display };
    const names = new Set([...(concept.designation ?? []).map((d) => d.value), ...synonyms]);
    names.delete(display);
    concept.designation = names.size ? [...names].map((value) => ({ language: 'en', value })) : undefined;
    byCode.set(code, concept);
  };
  for (const test of LAB_TESTS) add(test.code, test.display, test.synonyms);
  for (const analyte of Object.values(LAB_ANALYTES)) add(analyte.code, analyte.display, analyte.synonyms);
  return [...byCode.values()].map((c) => (c.designation ? c : { code: c.code, display: c.display }));
}

const CODE_SYSTEM: CodeSystem = {
  resourceType: 'CodeSystem',
  id: 'hearth-loinc-lab-tests',
  url: LOINC,
  name: 'LOINC',
  title: 'LOINC (the lab tests and analytes Hearth offers)',
  status: 'active',
  publisher: 'Regenstrief Institute, Inc.',
  copyright:
    'This material contains content from LOINC (http://loinc.org). LOINC is copyright © Regenstrief Institute, Inc. and the Logical Observation Identifiers Names and Codes (LOINC) Committee and is available at no cost under the license at http://loinc.org/license.',
  caseSensitive: false,
  content: 'fragment',
  concept: concepts(),
};

function valueSet(id: string, url: string, title: string, description: string, codes: Concept[]): ValueSet {
  return {
    resourceType: 'ValueSet',
    id,
    url,
    name: title.replace(/[^A-Za-z]/g, ''),
    title,
    status: 'active',
    description,
    copyright: CODE_SYSTEM.copyright,
    compose: { include: [{ system: LOINC, concept: codes.map((c) => ({ code: c.code, display: c.display })) }] },
  };
}

/** Hearth's own lab workflow task codes: the review a result awaits (Task.code of the results inbox). */
const TASK_CODES: CodeSystem = {
  resourceType: 'CodeSystem',
  id: 'hearth-lab-task',
  url: LAB_TASK_SYSTEM,
  name: 'HearthLabTask',
  title: 'Hearth lab workflow tasks',
  status: 'active',
  publisher: 'Hearth',
  caseSensitive: true,
  content: 'complete',
  concept: [
    {
      code: REVIEW_RESULT.code,
      display: REVIEW_RESULT.display,
      definition:
        "Review a diagnostic report: owned by the practitioner who is to acknowledge it (the order's requester); completed when they do.",
    },
  ],
};

/** The `lab-tests` terminology part: the LOINC fragment, the orderables and the analytes. */
export const LAB_TESTS_TERMINOLOGY: Bundle = {
  resourceType: 'Bundle',
  type: 'collection',
  entry: (
    [
      CODE_SYSTEM,
      TASK_CODES,
      valueSet(
        'hearth-lab-tests',
        LAB_TESTS_VALUE_SET,
        'Lab tests',
        'Orderable laboratory tests and panels (LOINC) for ServiceRequest.code.',
        LAB_TESTS,
      ),
      valueSet(
        'hearth-lab-analytes',
        LAB_ANALYTES_VALUE_SET,
        'Lab analytes',
        'The analytes the orderable lab tests report (LOINC), for Observation.code.',
        Object.values(LAB_ANALYTES),
      ),
    ] as Resource[]
  ).map((resource) => ({ resource })),
};
