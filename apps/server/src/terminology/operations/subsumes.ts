// hl7.org/fhir/R4/codesystem-operation-subsumes.html
import { badRequest, fail, notFoundWith, type Coding } from '@hearth/core';
import type { OperationRegistration } from '../../operations/registry.js';
import { standardDefinition } from '../../operations/definitions/standard.js';
import { jsonResult } from '../../operations/result.js';
import { findConcept, subsumption } from '../concept-lookup.js';
import { type TerminologyDeps } from './context.js';
import { targetCodeSystem } from './code-system-target.js';
import { out, parameters, readParams } from './params.js';

const SPECS = {
  codeA: { type: 'code' },
  codeB: { type: 'code' },
  system: { type: 'uri' },
  version: { type: 'string' },
  codingA: { type: 'Coding' },
  codingB: { type: 'Coding' },
} as const;

export function subsumesOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: standardDefinition('CodeSystem-subsumes'),
    async handler(input) {
      const params = readParams(input, SPECS);
      const a = side(params.codeA, params.codingA, 'A');
      const b = side(params.codeB, params.codingB, 'B');
      const system = (params.system as string | undefined) ?? a.system ?? b.system;
      for (const coding of [a, b]) {
        if (coding.system && system && coding.system !== system) {
          fail(badRequest(`Both codings must be in ${system}, not ${coding.system}`, 'system'));
        }
      }
      const cs = await targetCodeSystem(deps, input, system, params.version as string | undefined);
      const codes: string[] = [];
      for (const coding of [a, b]) {
        const concept = await findConcept(deps.pool, cs, coding.code as string, false);
        if (!concept) {
          fail(notFoundWith(`Code "${coding.code}" not found in ${cs.url}`));
        }
        codes.push(concept.code);
      }
      const outcome = await subsumption(deps.pool, cs, codes[0], codes[1]);
      return jsonResult(parameters([out('outcome', 'Code', outcome)]));
    },
  };
}

function side(code: unknown, coding: unknown, which: 'A' | 'B'): Coding {
  if (typeof code === 'string') {
    return { code };
  }
  const c = coding as Coding | undefined;
  if (!c?.code) {
    fail(badRequest(`$subsumes needs code${which} or coding${which}`, `code${which}`));
  }
  return c;
}
