// hl7.org/fhir/R4/codesystem-operation-lookup.html
import { badRequest, fail, notFoundWith, type ParametersParameter } from '@hearth/core';
import type { OperationRegistration } from '../../operations/registry.js';
import { standardDefinition } from '../../operations/definitions/standard.js';
import { jsonResult } from '../../operations/result.js';
import { findConcept, type ConceptDetails } from '../concept-lookup.js';
import { type TerminologyDeps } from './context.js';
import { inputCodings, targetCodeSystem } from './code-system-target.js';
import { out, parameters, readParams } from './params.js';

const SPECS = {
  code: { type: 'code' },
  system: { type: 'uri' },
  version: { type: 'string' },
  coding: { type: 'Coding' },
  date: { type: 'dateTime' },
  displayLanguage: { type: 'code' },
  property: { type: 'code', many: true },
} as const;

export function lookupOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: standardDefinition('CodeSystem-lookup'),
    // R4 defines $lookup at type level only; Hearth also answers CodeSystem/{id}/$lookup.
    override: { levels: ['type', 'instance'] },
    async handler(input) {
      const params = readParams(input, SPECS);
      const [coding] = inputCodings(params);
      if (!coding?.code) {
        fail(badRequest('$lookup needs a code (with system) or a coding', 'code'));
      }
      const version = (params.version as string | undefined) ?? coding.version;
      const cs = await targetCodeSystem(deps, input, coding.system, version);
      const concept = await findConcept(deps.pool, cs, coding.code);
      if (!concept) {
        fail(notFoundWith(`Code "${coding.code}" not found in ${cs.url}`));
      }
      const wanted = params.property as string[] | undefined;
      const result = parameters([
        out('name', 'String', cs.title ?? cs.name ?? cs.url),
        cs.version ? out('version', 'String', cs.version) : undefined,
        out('display', 'String', concept.display ?? concept.code),
        ...designations(concept),
        ...properties(concept, wanted ? new Set(wanted) : undefined),
      ]);
      return jsonResult(result);
    },
  };
}

function designations(concept: ConceptDetails): ParametersParameter[] {
  return ((concept.designations ?? []) as { language?: string; use?: object; value?: string }[]).map((d) => ({
    name: 'designation',
    part: [
      d.language ? out('language', 'Code', d.language) : undefined,
      d.use ? out('use', 'Coding', d.use) : undefined,
      out('value', 'String', d.value ?? ''),
    ].filter((p): p is ParametersParameter => !!p),
  }));
}

/** The concept's properties, parents and children; only those asked for when `wanted` is given. */
function properties(concept: ConceptDetails, wanted: Set<string> | undefined): ParametersParameter[] {
  const include = (code: string): boolean => !wanted || wanted.has(code);
  const list: ParametersParameter[] = [];
  const prop = (code: string, value: ParametersParameter): void => {
    list.push({ name: 'property', part: [out('code', 'Code', code), { ...value, name: 'value' }] });
  };
  if (concept.definition && include('definition')) {
    prop('definition', out('value', 'String', concept.definition));
  }
  for (const p of concept.properties ?? []) {
    if (!include(p.code)) {
      continue;
    }
    const valueKey = Object.keys(p).find((k) => k.startsWith('value'));
    if (valueKey) {
      list.push({
        name: 'property',
        part: [
          out('code', 'Code', p.code),
          { name: 'value', [valueKey]: (p as unknown as Record<string, unknown>)[valueKey] },
        ],
      });
    }
  }
  const declared = new Set(
    (concept.properties ?? []).map((p) => `${p.code}|${p.valueCode ?? p.valueBoolean ?? p.valueString ?? ''}`),
  );
  if (concept.inactive && include('inactive') && !declared.has('inactive|true')) {
    prop('inactive', out('value', 'Boolean', true));
  }
  for (const [code, values] of [
    ['parent', concept.parents],
    ['child', concept.children],
  ] as const) {
    if (!include(code)) {
      continue;
    }
    for (const value of values) {
      if (!declared.has(`${code}|${value}`)) {
        prop(code, out('value', 'Code', value));
      }
    }
  }
  return list;
}
