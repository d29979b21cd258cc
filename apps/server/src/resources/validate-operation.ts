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
import type { ProfileService } from './profiles.js';

const MODES = new Set(['create', 'update', 'delete']);

interface ParametersBody {
  resourceType: 'Parameters';
  parameter?: { name?: string; resource?: Resource; valueCode?: string; valueUri?: string; valueCanonical?: string }[];
}

/**
 * $validate answers 200 with an OperationOutcome whether or not the resource is valid; each issue
 * names the FHIRPath of its element. 4xx only when validation could not be done at all. With
 * `profile`, the resource is also validated against that profile (stored in the project); the
 * profiles it declares in meta.profile are checked when the project has them.
 */
/** Checks a resource's codings against the terminology its project sees (the terminology module's). */
export type CodingCheck = (resource: Resource, projectId: string) => Promise<OperationOutcomeIssue[]>;

export function validateOperation(
  validator: ResourceValidator,
  profiles?: ProfileService,
  codings?: CodingCheck,
): OperationRegistration {
  return {
    definition: standardDefinition('Resource-validate'),
    handler: (input) => runValidate(input, validator, profiles, codings),
  };
}

async function runValidate(
  input: OperationInput,
  validator: ResourceValidator,
  profiles: ProfileService | undefined,
  codings: CodingCheck | undefined,
): Promise<OperationResult> {
  const { target, context } = input;
  const resourceType = target.resourceType as string;
  const { resource: given, mode, profile } = readInput(input);
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
      // The vital signs profiles R4 requires by code too, as the reference validator applies them.
      issues.push(...validator.validate(resource, { requiredProfiles: true }));
      if (profiles) {
        issues.push(...(await profileIssues(profiles, resource, profile, context.repo.scope.projectId)));
      }
      if (codings) {
        issues.push(...(await codings(resource, context.repo.scope.projectId)));
      }
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

/**
 * The issues against the profile asked for (unknown: an error) and against the declared ones this
 * server has (a declared profile it does not have is a warning: it is not enforced here).
 */
async function profileIssues(
  profiles: ProfileService,
  resource: Resource,
  asked: string | undefined,
  projectId: string,
): Promise<OperationOutcomeIssue[]> {
  const issues = asked ? await profiles.validate(resource, [asked], projectId) : [];
  const declared = (resource.meta?.profile ?? []).filter((p): p is string => typeof p === 'string' && p !== asked);
  if (declared.length > 0) {
    const found = await profiles.validate(resource, declared, projectId);
    issues.push(...found.map((i) => (i.code === 'not-found' ? { ...i, severity: 'warning' as const } : i)));
  }
  return issues;
}

/** The body is the resource itself, or Parameters with resource, mode and profile (operation parameters). */
function readInput(input: OperationInput): { resource?: Resource; mode?: string; profile?: string } {
  let mode = input.query.get('mode') ?? undefined;
  let profile = input.query.get('profile') ?? undefined;
  const body = input.body;
  let resource: Resource | undefined;
  if (body !== undefined && body !== null && body !== '') {
    if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
      fail(badRequest('$validate takes a FHIR resource or Parameters in JSON'));
    }
    const r = body as Resource;
    // A Parameters is the operation's input, unless it is itself what Parameters/$validate is given
    // to validate (it then has no "resource" parameter).
    if (r.resourceType === 'Parameters' && !isParametersToValidate(input, body as ParametersBody)) {
      const params = (body as ParametersBody).parameter ?? [];
      if (!Array.isArray(params)) {
        fail(badRequest('Parameters.parameter must be an array', 'Parameters.parameter'));
      }
      resource = params.find((p) => p?.name === 'resource')?.resource;
      const modeParam = params.find((p) => p?.name === 'mode');
      mode = modeParam?.valueCode ?? mode;
      const profileParam = params.find((p) => p?.name === 'profile');
      profile = profileParam?.valueCanonical ?? profileParam?.valueUri ?? profile;
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
  if (profile !== undefined && (typeof profile !== 'string' || profile === '')) {
    fail(badRequest('profile must be the canonical URL of a StructureDefinition', 'profile'));
  }
  return { resource, mode, profile };
}

function isParametersToValidate(input: OperationInput, body: ParametersBody): boolean {
  return (
    input.target.resourceType === 'Parameters' &&
    !(Array.isArray(body.parameter) && body.parameter.some((p) => p?.name === 'resource'))
  );
}
