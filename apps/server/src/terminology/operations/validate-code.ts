// hl7.org/fhir/R4/valueset-operation-validate-code.html and codesystem-operation-validate-code.html
import {
  badRequest,
  fail,
  notFoundWith,
  type CodeSystem,
  type Coding,
  type Parameters,
  type ValueSet,
} from '@hearth/core';
import type { OperationRegistration } from '../../operations/registry.js';
import type { OperationInput } from '../../operations/types.js';
import { standardDefinition } from '../../operations/definitions/standard.js';
import { jsonResult } from '../../operations/result.js';
import { findConcept } from '../concept-lookup.js';
import { flattenConcepts } from '../concepts.js';
import { findMember } from '../expand.js';
import { findValueSet, findValueSetById, splitCanonical, type ValueSetRow } from '../resolve.js';
import { scopeOf, type TerminologyDeps } from './context.js';
import { inputCodings, targetCodeSystem } from './code-system-target.js';
import { out, parameters, readParams } from './params.js';

const COMMON = {
  code: { type: 'code' },
  display: { type: 'string' },
  coding: { type: 'Coding' },
  codeableConcept: { type: 'CodeableConcept' },
  date: { type: 'dateTime' },
  abstract: { type: 'boolean' },
  displayLanguage: { type: 'code' },
} as const;

const VS_SPECS = {
  ...COMMON,
  url: { type: 'uri' },
  context: { type: 'uri' },
  valueSet: { type: 'resource' },
  valueSetVersion: { type: 'string' },
  system: { type: 'uri' },
  systemVersion: { type: 'string' },
} as const;

const CS_SPECS = {
  ...COMMON,
  url: { type: 'uri' },
  codeSystem: { type: 'resource' },
  version: { type: 'string' },
} as const;

/** One coding's verdict. */
interface Verdict {
  valid: boolean;
  display?: string;
  message?: string;
}

/** Whether a supplied display is one the concept has (case and spacing aside). */
function displayMatches(given: string, display: string | null | undefined, designations?: unknown[] | null): boolean {
  const norm = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();
  const known = [display, ...((designations ?? []) as { value?: string }[]).map((d) => d.value)];
  return known.some((k) => typeof k === 'string' && norm(k) === norm(given));
}

/** result, message and display (R4 $validate-code output): valid when any coding is. */
function verdictParameters(verdicts: Verdict[]): Parameters {
  const valid = verdicts.find((v) => v.valid);
  const messages = verdicts.filter((v) => !v.valid && v.message).map((v) => v.message as string);
  const display = (valid ?? verdicts.find((v) => v.display))?.display;
  return parameters([
    out('result', 'Boolean', !!valid),
    !valid && messages.length > 0 ? out('message', 'String', messages.join('; ')) : undefined,
    display ? out('display', 'String', display) : undefined,
  ]);
}

function codingsOrFail(params: Record<string, unknown>): Coding[] {
  const codings = inputCodings(params);
  if (codings.length === 0 || codings.some((c) => typeof c.code !== 'string' || c.code === '')) {
    fail(badRequest('$validate-code needs a code, a coding or a codeableConcept with codes', 'code'));
  }
  return codings;
}

export function valueSetValidateCodeOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: standardDefinition('ValueSet-validate-code'),
    async handler(input) {
      const params = readParams(input, VS_SPECS);
      const definition = await valueSetDefinition(deps, input, params);
      const codings = codingsOrFail(params);
      const scope = scopeOf(input.context);
      const verdicts: Verdict[] = [];
      for (const coding of codings) {
        const label = `${coding.system ? `${coding.system}|` : ''}${coding.code}`;
        const member = await findMember(deps.pool, scope, definition, coding.code as string, coding.system);
        const display = (params.display as string | undefined) ?? coding.display;
        if (!member.found) {
          verdicts.push({ valid: false, message: `The code ${label} is not in the value set ${definition.label}` });
        } else if (member.abstract && params.abstract !== true) {
          verdicts.push({
            valid: false,
            display: member.display,
            message: `The code ${label} is abstract (not selectable)`,
          });
        } else if (display && !displayMatches(display, member.display)) {
          verdicts.push({
            valid: false,
            display: member.display,
            message: `The display "${display}" is not the display of ${label} ("${member.display ?? ''}")`,
          });
        } else {
          verdicts.push({ valid: true, display: member.display });
        }
      }
      return jsonResult(verdictParameters(verdicts));
    },
  };
}

async function valueSetDefinition(
  deps: TerminologyDeps,
  { context, target }: OperationInput,
  params: Record<string, unknown>,
): Promise<(ValueSet | ValueSetRow) & { label: string }> {
  const scope = scopeOf(context);
  if (target.id) {
    const row = await findValueSetById(deps.pool, scope, target.id);
    if (!row) {
      fail(notFoundWith(`ValueSet/${target.id} not found`));
    }
    return { ...row, label: row.url ?? `ValueSet/${target.id}` };
  }
  if (params.valueSet) {
    const vs = params.valueSet as ValueSet;
    return { ...vs, label: vs.url ?? 'given in the request' };
  }
  if (typeof params.url === 'string') {
    const { url, version } = splitCanonical(params.url);
    const row = await findValueSet(deps.pool, scope, url, {
      version: (params.valueSetVersion as string | undefined) ?? version,
      date: params.date as string | undefined,
    });
    if (!row) {
      fail(notFoundWith(`ValueSet ${params.url} not found`));
    }
    return { ...row, label: url };
  }
  fail(badRequest('$validate-code needs a url, a valueSet, or a ValueSet id', 'url'));
}

export function codeSystemValidateCodeOperation(deps: TerminologyDeps): OperationRegistration {
  return {
    definition: standardDefinition('CodeSystem-validate-code'),
    async handler(input) {
      const params = readParams(input, CS_SPECS);
      const codings = codingsOrFail(params);
      const inline = params.codeSystem as CodeSystem | undefined;
      const cs = inline
        ? undefined
        : await targetCodeSystem(
            deps,
            input,
            (params.url as string) ?? codings[0].system,
            params.version as string,
            'url',
          );
      const url = inline?.url ?? cs?.url;
      const inlineConcepts = inline ? new Map(flattenConcepts(inline).map((c) => [c.code, c])) : undefined;
      const verdicts: Verdict[] = [];
      for (const coding of codings) {
        if (coding.system && url && coding.system !== url) {
          verdicts.push({ valid: false, message: `The coding's system ${coding.system} is not ${url}` });
          continue;
        }
        const concept = cs
          ? await findConcept(deps.pool, cs, coding.code as string, false)
          : inlineConcepts?.get(coding.code as string);
        const display = (params.display as string | undefined) ?? coding.display;
        if (!concept) {
          verdicts.push({ valid: false, message: `The code "${coding.code}" is not in ${url ?? 'the code system'}` });
        } else if (concept.abstract && params.abstract === false) {
          verdicts.push({
            valid: false,
            display: concept.display ?? undefined,
            message: `The code "${coding.code}" is abstract`,
          });
        } else if (display && !displayMatches(display, concept.display, concept.designations)) {
          verdicts.push({
            valid: false,
            display: concept.display ?? undefined,
            message: `The display "${display}" is not the display of "${coding.code}" ("${concept.display ?? ''}")`,
          });
        } else {
          verdicts.push({ valid: true, display: concept.display ?? undefined });
        }
      }
      return jsonResult(verdictParameters(verdicts));
    },
  };
}
