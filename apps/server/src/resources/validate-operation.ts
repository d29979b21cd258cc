// $validate at type and instance level: hl7.org/fhir/R4/resource-operation-validate.html
import {
  badRequest,
  createIssue,
  fail,
  type OperationOutcome,
  type OperationOutcomeIssue,
  type Resource,
} from '@hearth/core';
import { standardDefinition } from '../operations/definitions/standard.js';
import type { OperationRegistration } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import type { ResourceValidator } from '../storage/types.js';

const MODES = new Set(['create', 'update', 'delete']);

interface ParametersBody {
  resourceType: 'Parameters';
  parameter?: { name?: string; resource?: Resource; valueCode?: string; valueUri?: string; valueCanonical?: string }[];
}

/**
 * $validate answers 200 with an OperationOutcome whether or not the resource is valid; each issue
 * names the FHIRPath of its element. 4xx only when validation could not be done at all.
 */
export function validateOperation(validator: ResourceValidator): OperationRegistration {
  return {
    definition: standardDefinition('Resource-validate'),
    handler: (input) => runValidate(input, validator),
  };
}

async function runValidate(input: OperationInput, validator: ResourceValidator): Promise<OperationResult> {
  const { target, context } = input;
  const resourceType = target.resourceType as string;
  const { resource: given, mode } = readInput(input);
  if (input.method === 'GET' && !target.id) {
    fail(badRequest('Type-level $validate takes the resource to validate in a POST body'));
  }
  let resource = given;
  if (!resource) {
    if (!target.id) {
      fail(badRequest('Give the resource to validate as the body or as the "resource" parameter', 'resource'));
    }
    if (mode !== 'delete') {
      resource = (await context.repo.readResource(resourceType, target.id)).resource;
    }
  }
  const issues: OperationOutcomeIssue[] = [];
  if (mode === 'delete') {
    if (target.id) {
      await context.repo.readResource(resourceType, target.id);
    }
  } else if (resource) {
    if (resource.resourceType !== resourceType) {
      issues.push(
        createIssue(
          'invalid',
          `Resource type ${String(resource.resourceType)} does not match the URL (${resourceType})`,
          'resourceType',
        ),
      );
    } else {
      issues.push(...validator.validate(resource));
      if (mode === 'update' || target.id) {
        const id = target.id ?? resource.id;
        if (!resource.id) {
          issues.push(createIssue('required', 'An update needs the resource id', `${resourceType}.id`));
        } else if (id !== resource.id) {
          issues.push(
            createIssue('invalid', `Resource id ${resource.id} does not match the URL (${id})`, `${resourceType}.id`),
          );
        }
      }
    }
  }
  const outcome: OperationOutcome = {
    resourceType: 'OperationOutcome',
    issue: issues.length > 0 ? issues : [createIssue('informational', 'No issues found', undefined, 'information')],
  };
  return jsonResult(outcome);
}

/** The body is the resource itself, or Parameters with resource, mode and profile (operation parameters). */
function readInput(input: OperationInput): { resource?: Resource; mode?: string } {
  let mode = input.query.get('mode') ?? undefined;
  const body = input.body;
  let resource: Resource | undefined;
  if (body !== undefined && body !== null && body !== '') {
    if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
      fail(badRequest('$validate takes a FHIR resource or Parameters in JSON'));
    }
    const r = body as Resource;
    if (r.resourceType === 'Parameters') {
      const params = (body as ParametersBody).parameter ?? [];
      if (!Array.isArray(params)) {
        fail(badRequest('Parameters.parameter must be an array', 'Parameters.parameter'));
      }
      resource = params.find((p) => p?.name === 'resource')?.resource;
      const modeParam = params.find((p) => p?.name === 'mode');
      mode = modeParam?.valueCode ?? mode;
    } else {
      resource = r;
    }
  }
  if (mode !== undefined && !MODES.has(mode)) {
    fail(badRequest(`mode must be create, update or delete, not "${mode}"`, 'mode'));
  }
  if (resource !== undefined && (typeof resource !== 'object' || resource === null || Array.isArray(resource))) {
    fail(badRequest('The "resource" parameter must be a resource', 'resource'));
  }
  return { resource, mode };
}
