// $validate at type and instance level: hl7.org/fhir/R4/resource-operation-validate.html
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  badRequest,
  createIssue,
  fail,
  type OperationOutcome,
  type OperationOutcomeIssue,
  type Resource,
} from '@hearth/core';
import type { ResourceValidator } from '../../storage/types.js';
import { ctx } from '../context.js';
import { sendJson } from '../../http/fhir-reply.js';
import type { OperationDefinitionEntry, OperationTarget } from './registry.js';

const MODES = new Set(['create', 'update', 'delete']);

interface ParametersBody {
  resourceType: 'Parameters';
  parameter?: { name?: string; resource?: Resource; valueCode?: string; valueUri?: string; valueCanonical?: string }[];
}

/**
 * $validate answers 200 with an OperationOutcome whether or not the resource is valid; each issue
 * names the FHIRPath of its element. 4xx only when validation could not be done at all.
 */
export function validateOperation(validator: ResourceValidator): OperationDefinitionEntry {
  return {
    name: 'validate',
    definition: 'http://hl7.org/fhir/OperationDefinition/Resource-validate',
    levels: ['type', 'instance'],
    methods: ['GET', 'POST'],
    handler: (request, reply, target) => runValidate(request, reply, target, validator),
  };
}

async function runValidate(
  request: FastifyRequest,
  reply: FastifyReply,
  target: OperationTarget,
  validator: ResourceValidator,
): Promise<FastifyReply> {
  const resourceType = target.resourceType as string;
  const { resource: given, mode } = readInput(request);
  if (request.method === 'GET' && !target.id) {
    fail(badRequest('Type-level $validate takes the resource to validate in a POST body'));
  }
  let resource = given;
  if (!resource) {
    if (!target.id) {
      fail(badRequest('Give the resource to validate as the body or as the "resource" parameter', 'resource'));
    }
    if (mode !== 'delete') {
      resource = (await ctx(request).repo.readResource(resourceType, target.id)).resource;
    }
  }
  const issues: OperationOutcomeIssue[] = [];
  if (mode === 'delete') {
    if (target.id) {
      await ctx(request).repo.readResource(resourceType, target.id);
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
  return sendJson(reply, 200, outcome);
}

/** The body is the resource itself, or Parameters with resource, mode and profile (operation parameters). */
function readInput(request: FastifyRequest): { resource?: Resource; mode?: string } {
  const query = request.query as Record<string, unknown>;
  let mode = typeof query.mode === 'string' ? query.mode : undefined;
  const body = request.body;
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
