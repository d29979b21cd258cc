import type { AccessInteraction, SqlParam } from '../../storage/types.js';
import { FALSE, isWrite, typeLiteral, WRITE_INTERACTIONS, type AccessLayer, type WritableRows } from './layer.js';

/** Only the super admin project may read or write these: sign-in state, keys, identity provider setup. */
export const SUPER_ADMIN_TYPES = [
  'Login',
  'JsonWebKey',
  'DomainConfiguration',
  'UserSecurityRequest',
  'PasswordChangeRequest',
  'IdentityProvider',
];

/** Project configuration: project admins write it, other members only read it. */
export const PROJECT_ADMIN_TYPES = [
  'Project',
  'ProjectMembership',
  'ClientApplication',
  'Bot',
  'User',
  'AccessPolicy',
  'UserConfiguration',
  'Agent',
];

/** Hidden from everyone through the FHIR API, super admins included: set through their own endpoints. */
const ALWAYS_HIDDEN: Record<string, string[]> = {
  User: ['passwordHash', 'mfaSecret'],
  JsonWebKey: ['d', 'p', 'q', 'dp', 'dq', 'qi'],
};

/** Hidden from members who are not project admins. */
const MEMBER_HIDDEN: Record<string, string[]> = {
  ClientApplication: ['secret', 'retiringSecret'],
  Project: ['secret', 'systemSecret', 'systemSetting'],
  Bot: ['secret'],
};

/** Server-owned fields nobody changes through the FHIR API. */
const ALWAYS_READONLY: Record<string, string[]> = {
  User: ['passwordHash', 'mfaSecret', 'mfaEnrolled'],
};

/** Fields only super admins change: project privileges and cross-project links. */
const ADMIN_READONLY: Record<string, string[]> = {
  Project: ['superAdmin', 'features', 'link', 'systemSetting', 'systemSecret', 'owner'],
  ProjectMembership: ['project'],
  User: ['project', 'admin', 'emailVerified'],
};

export type Role = 'super' | 'admin' | 'member';

export interface RoleProjects {
  /** The project the member writes to: the only one whose rows it may change (linked and shared projects are read-only). */
  own: string;
}

/**
 * What a member's role allows before any access policy: project configuration is admin-only to
 * write, sign-in state is super-admin-only, secrets are hidden. Creating a Project goes through
 * Project/$init, not a plain create.
 */
export class RoleLayer implements AccessLayer {
  constructor(
    readonly role: Role,
    private readonly projects?: RoleProjects,
  ) {}

  allows(resourceType: string, interaction: AccessInteraction): boolean {
    if (this.role === 'super') {
      return true;
    }
    if (SUPER_ADMIN_TYPES.includes(resourceType)) {
      return false;
    }
    if (resourceType === 'Project' && (interaction === 'create' || interaction === 'delete')) {
      return false;
    }
    if (this.role === 'member' && PROJECT_ADMIN_TYPES.includes(resourceType) && isWrite(interaction)) {
      return false;
    }
    return true;
  }

  condition(
    resourceType: string | undefined,
    interaction: AccessInteraction,
    alias: string,
    param: SqlParam,
  ): string | undefined {
    if (this.role === 'super') {
      return undefined;
    }
    const conditions: string[] = [];
    if (resourceType === undefined) {
      // Rows of any type: leave out the types this role may never see.
      conditions.push(`${alias}.resource_type NOT IN (${SUPER_ADMIN_TYPES.map(typeLiteral).join(', ')})`);
    } else if (!this.allows(resourceType, interaction)) {
      return FALSE;
    }
    if (this.projects && isWrite(interaction)) {
      // Linked projects and the shared definitions are read-only: writes stay in the own project.
      conditions.push(`${alias}.project_id = ${param(this.projects.own)}::uuid`);
    }
    return conditions.length === 0 ? undefined : conditions.join(' AND ');
  }

  writableRows(resourceType: string): WritableRows | undefined {
    if (this.role === 'super') {
      return {};
    }
    if (!WRITE_INTERACTIONS.some((i) => this.allows(resourceType, i))) {
      return undefined;
    }
    // The same pin as condition() puts on writes.
    return this.projects ? { project: this.projects.own } : {};
  }

  hiddenFields(resourceType: string): string[] {
    const fields = [...(ALWAYS_HIDDEN[resourceType] ?? [])];
    if (this.role === 'member') {
      fields.push(...(MEMBER_HIDDEN[resourceType] ?? []));
    }
    return fields;
  }

  readonlyFields(resourceType: string): string[] {
    const fields = [...(ALWAYS_READONLY[resourceType] ?? [])];
    if (this.role !== 'super') {
      fields.push(...(ADMIN_READONLY[resourceType] ?? []));
    }
    return fields;
  }
}
