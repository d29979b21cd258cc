// The parameters of PlanDefinition/$apply (hl7.org/fhir/R4/plandefinition-operation-apply.html)
// that Hearth takes, read from a Parameters body or the query string; anything else is a 422.
import { badRequest, fail, unprocessable } from '@hearth/core';
import type { OperationInput } from '../operations/types.js';

type Json = Record<string, unknown>;

export interface Reference {
  reference: string;
}

export interface ApplyParameters {
  planDefinition?: string;
  subject: string;
  encounter?: string;
  practitioner?: string;
  organization?: string;
}

const SUPPORTED = new Set(['planDefinition', 'subject', 'encounter', 'practitioner', 'organization']);
export const REFERENCE = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/;

/** A parameter's value: valueString/valueReference/valueCanonical in a Parameters body, or the query string. */
export function applyParameters(input: Pick<OperationInput, 'query' | 'body' | 'method'>): ApplyParameters {
  const values = new Map<string, string>();
  for (const [name, value] of input.query) values.set(name, value);
  const body = input.body as { resourceType?: string; parameter?: Json[] } | undefined;
  if (input.method === 'POST' && body !== undefined && body !== null) {
    if (typeof body !== 'object' || Buffer.isBuffer(body) || body.resourceType !== 'Parameters') {
      fail(badRequest('PlanDefinition/$apply takes a Parameters resource in a POST body'));
    }
    for (const [i, p] of (body.parameter ?? []).entries()) {
      const name = p.name;
      if (typeof name !== 'string') fail(badRequest('Each parameter needs a name', `Parameters.parameter[${i}]`));
      const ref = p.valueReference as { reference?: unknown } | undefined;
      const value = ref ? ref.reference : (p.valueString ?? p.valueCanonical ?? p.valueUri);
      if (typeof value !== 'string') {
        fail(
          badRequest(
            `Parameter ${name} must be a valueString, valueReference or valueCanonical`,
            `Parameters.parameter[${i}]`,
          ),
        );
      }
      values.set(name, value);
    }
  }
  for (const name of values.keys()) {
    if (!SUPPORTED.has(name) && !name.startsWith('_')) {
      fail(unprocessable(`PlanDefinition/$apply: parameter "${name}" is not supported by Hearth`, name));
    }
  }
  const subject = values.get('subject');
  if (!subject) fail(badRequest('PlanDefinition/$apply needs a subject (Patient/{id})', 'subject'));
  const checkRef = (name: string, types: string[]): string | undefined => {
    const v = values.get(name);
    if (v === undefined) return undefined;
    const m = REFERENCE.exec(v);
    if (!m || !types.includes(m[1])) fail(badRequest(`${name} must be a reference to ${types.join(' or ')}`, name));
    return v;
  };
  return {
    planDefinition: values.get('planDefinition'),
    subject: checkRef('subject', ['Patient']) as string,
    encounter: checkRef('encounter', ['Encounter']),
    practitioner: checkRef('practitioner', ['Practitioner', 'PractitionerRole']),
    organization: checkRef('organization', ['Organization']),
  };
}
