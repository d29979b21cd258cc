// Project/$init: creates a project with its admin (the platform's Project $init operation).
import { badRequest, fail, forbiddenWith, unauthorizedWith, type Resource } from '@hearth/core';
import { PROJECT_INIT } from '../../operations/definitions/hearth.js';
import type { OperationRegistration } from '../../operations/registry.js';
import { jsonResult } from '../../operations/result.js';
import type { AuthModule } from '../module.js';
import { createProject, createUser, normalizeEmail } from '../projects.js';
import { findUserByEmail, readByReference } from '../store.js';
import type { User } from '../types.js';

interface Parameters {
  resourceType: 'Parameters';
  parameter?: { name?: string; valueString?: string; valueBoolean?: boolean }[];
}

function param(body: unknown, name: string): { valueString?: string; valueBoolean?: boolean } | undefined {
  if (!body || typeof body !== 'object' || (body as Resource).resourceType !== 'Parameters') {
    fail(badRequest('Body must be a Parameters resource'));
  }
  return (body as Parameters).parameter?.find((p) => p.name === name);
}

/**
 * A new owner's names until they set their own: User.firstName and lastName are both required
 * (non-empty), so "jane.doe@x" is Jane Doe and "ops@x" is ops ops.
 */
function namesFromEmail(email: string): { firstName: string; lastName: string } {
  const parts = email
    .split('@')[0]
    .split(/[._+-]+/)
    .filter(Boolean);
  const cap = (part: string) => part.charAt(0).toUpperCase() + part.slice(1);
  const first = parts[0] ?? email.split('@')[0];
  return parts.length > 1
    ? { firstName: cap(first), lastName: parts.slice(1).map(cap).join(' ') }
    : { firstName: first, lastName: first };
}

/**
 * Parameters: name (required), description, ownerEmail (super admins: the owner, created when
 * new), strictMode. Without ownerEmail the caller owns the project. Registration being off
 * leaves this to super admins.
 */
export function projectInitOperation(auth: AuthModule): OperationRegistration {
  return {
    definition: PROJECT_INIT,
    handler: async ({ context, body }) => {
      const caller = auth.callerOf(context);
      if (!caller) {
        fail(unauthorizedWith('Authentication required: send Authorization: Bearer <access token>'));
      }
      const name = param(body, 'name')?.valueString;
      if (!name?.trim()) {
        fail(badRequest('Parameter name is required', 'name'));
      }
      if (!caller.superAdmin && caller.restricted) {
        fail(forbiddenWith('Access policies and SMART scopes do not allow creating projects'));
      }
      if (!caller.superAdmin && !auth.deps.config.registrationEnabled) {
        fail(forbiddenWith('Only super admins create projects on this server'));
      }
      const ownerEmail = param(body, 'ownerEmail')?.valueString;
      let owner: User | undefined;
      if (ownerEmail) {
        if (!caller.superAdmin) {
          fail(forbiddenWith('Only super admins create projects for someone else (ownerEmail)'));
        }
        const email = normalizeEmail(ownerEmail, 'ownerEmail');
        owner =
          (await findUserByEmail(auth.deps.pool, email)) ??
          (await createUser(auth.deps, { ...namesFromEmail(email), email }));
      } else {
        owner =
          caller.user.resourceType === 'User'
            ? await readByReference<User>(auth.deps.pool, `User/${caller.user.id}`)
            : undefined;
        if (!owner || owner.project) {
          fail(forbiddenWith('Project/$init needs a signed-in server user (or ownerEmail, for super admins)'));
        }
      }
      const strictMode = param(body, 'strictMode')?.valueBoolean;
      const created = await createProject(auth.deps, {
        name,
        description: param(body, 'description')?.valueString,
        owner,
        ...(caller.superAdmin && strictMode !== undefined ? { strictMode } : {}),
      });
      return jsonResult(created.project, 201, {
        location: `${auth.deps.config.baseUrl}fhir/R4/Project/${created.project.id}`,
      });
    },
  };
}
