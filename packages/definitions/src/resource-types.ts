import { getSchema } from './schema/load.js';

/**
 * Hearth's own stored types: each has a table. Each is defined by a StructureDefinition in
 * src/platform/ (a test checks that the two agree). IdentityProvider is defined there as a data
 * type, because ClientApplication and DomainConfiguration embed it (as the platform API does),
 * so the validator does not accept it as a resource; it stays in this list because applied
 * migrations created its table (and migration 0200 indexes it).
 */
export const PLATFORM_RESOURCE_TYPES = [
  'Project',
  'ClientApplication',
  'User',
  'ProjectMembership',
  'Bot',
  'Login',
  'PasswordChangeRequest',
  'UserSecurityRequest',
  'JsonWebKey',
  'AccessPolicy',
  'UserConfiguration',
  'BulkDataExport',
  'SmartAppLaunch',
  'DomainConfiguration',
  'IdentityProvider',
  'AsyncJob',
  'Agent',
  'ViewDefinition',
] as const;

export type PlatformResourceType = (typeof PLATFORM_RESOURCE_TYPES)[number];

let r4Types: string[] | undefined;

/** Every concrete R4 resource type (kind = resource, not abstract), sorted. */
export function getR4ResourceTypes(): string[] {
  r4Types ??= Object.values(getSchema().types)
    .filter((t) => t.kind === 'resource' && !t.abstract && !t.platform)
    .map((t) => t.name)
    .sort();
  return r4Types;
}

/** Every resource type Hearth stores: R4's and the platform's. */
export function getAllResourceTypes(): string[] {
  return [...getR4ResourceTypes(), ...PLATFORM_RESOURCE_TYPES].sort();
}
