// hl7.org/fhir/R4/conceptmap-operation-translate.html
import {
  badRequest,
  fail,
  notFoundWith,
  type CodeableConcept,
  type Coding,
  type ConceptMap,
  type ParametersParameter,
} from '@hearth/core';
import type { OperationRegistration } from '../../operations/registry.js';
import { standardDefinition } from '../../operations/definitions/standard.js';
import { jsonResult } from '../../operations/result.js';
import { findConceptMap, findConceptMaps, splitCanonical, type ConceptMapRow } from '../resolve.js';
import { translate, type ConceptMapTranslateOutput, type MapSource } from '../translate.js';
import { scopeOf, type TerminologyDeps } from './context.js';
import { inputCodings } from './code-system-target.js';
import { out, parameters, readParams } from './params.js';

/** R4 ConceptMapTranslateParameters. */
const SPECS = {
  url: { type: 'uri' },
  conceptMap: { type: 'resource' },
  conceptMapVersion: { type: 'string' },
  code: { type: 'code' },
  system: { type: 'uri' },
  version: { type: 'string' },
  source: { type: 'uri' },
  coding: { type: 'Coding' },
  codeableConcept: { type: 'CodeableConcept' },
  target: { type: 'uri' },
  targetsystem: { type: 'uri' },
  dependency: { type: 'string', many: true },
  reverse: { type: 'boolean' },
} as const;

export function translateOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: standardDefinition('ConceptMap-translate'),
    async handler(input) {
      const { target, context } = input;
      const params = readParams(input, SPECS, { name: 'conceptMap', resourceType: 'ConceptMap' });
      const scope = scopeOf(context);
      const codings = inputCodings(params);
      if (codings.length === 0 || codings.some((c) => !c.code)) {
        fail(badRequest('$translate needs a code (with system), a coding or a codeableConcept', 'code'));
      }
      if (typeof params.code === 'string' && typeof params.system !== 'string') {
        fail(badRequest('$translate needs the system of the code', 'system'));
      }
      if (typeof params.version === 'string') {
        codings[0].version ??= params.version;
      }
      const resolveMap = (url: string): Promise<ConceptMapRow | undefined> => {
        const c = splitCanonical(url);
        return findConceptMap(deps.pool, scope, { url: c.url, version: c.version });
      };

      let source: MapSource;
      if (target.id) {
        const map = await findConceptMap(deps.pool, scope, { id: target.id });
        if (!map) {
          fail(notFoundWith(`ConceptMap/${target.id} not found`));
        }
        source = { kind: 'stored', maps: [map] };
      } else if (params.conceptMap) {
        source = { kind: 'inline', map: params.conceptMap as ConceptMap };
      } else if (typeof params.url === 'string') {
        const c = splitCanonical(params.url);
        const map = await findConceptMap(deps.pool, scope, {
          url: c.url,
          version: (params.conceptMapVersion as string | undefined) ?? c.version,
        });
        if (!map) {
          fail(notFoundWith(`ConceptMap ${params.url} not found`));
        }
        source = { kind: 'stored', maps: [map] };
      } else {
        const candidates = await findConceptMaps(deps.pool, scope, {
          source: params.source as string | undefined,
          target: params.target as string | undefined,
        });
        source = { kind: 'stored', maps: candidates };
      }

      const output = await translate(
        deps.pool,
        source,
        {
          codings,
          targetSystem: params.targetsystem as string | undefined,
          reverse: params.reverse === true,
          dependencies: dependencies(params.parts.get('dependency')),
        },
        resolveMap,
      );
      if (!output.result && source.kind === 'stored' && source.maps.length === 0) {
        output.message = 'No ConceptMap on this server matches the source and target given';
      }
      return jsonResult(translateParameters(output));
    },
  };
}

function dependencies(list: ParametersParameter[] | undefined): { element?: string; codings: Coding[] }[] {
  return (list ?? []).map((d) => {
    const element = d.part?.find((p) => p.name === 'element')?.valueUri;
    const concept = d.part?.find((p) => p.name === 'concept')?.valueCodeableConcept as CodeableConcept | undefined;
    return { element, codings: concept?.coding ?? [] };
  });
}

/** The output as Parameters: result, message, and one match (equivalence, concept, source, product) each. */
export function translateParameters(output: ConceptMapTranslateOutput) {
  return parameters([
    out('result', 'Boolean', output.result),
    output.message ? out('message', 'String', output.message) : undefined,
    ...output.match.map((m): ParametersParameter => ({
      name: 'match',
      part: [
        out('equivalence', 'Code', m.equivalence),
        m.concept ? out('concept', 'Coding', m.concept) : undefined,
        ...(m.product ?? []).map((p): ParametersParameter => ({
          name: 'product',
          part: [p.element ? out('element', 'Uri', p.element) : undefined, out('concept', 'Coding', p.concept)].filter(
            (x): x is ParametersParameter => !!x,
          ),
        })),
        m.source ? out('source', 'Uri', m.source) : undefined,
      ].filter((x): x is ParametersParameter => !!x),
    })),
  ]);
}
