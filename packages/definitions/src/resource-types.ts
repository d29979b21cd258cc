import { readR4File } from './files.js';

/** Hearth's own resource types, stored and validated like any FHIR resource. */
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
] as const;

interface BundleOfDefinitions {
  entry: {
    resource: { resourceType: string; kind?: string; abstract?: boolean; name?: string; derivation?: string };
  }[];
}

let r4Types: string[] | undefined;

/** Every concrete R4 resource type (kind = resource, not abstract), sorted. */
export function getR4ResourceTypes(): string[] {
  if (!r4Types) {
    const bundle = readR4File<BundleOfDefinitions>('profiles-resources.json');
    r4Types = bundle.entry
      .map((e) => e.resource)
      .filter(
        (r) =>
          r.resourceType === 'StructureDefinition' &&
          r.kind === 'resource' &&
          !r.abstract &&
          r.derivation !== 'constraint',
      )
      .map((r) => r.name as string)
      .sort();
  }
  return r4Types;
}

/** Every resource type Hearth stores: R4's and the platform's. */
export function getAllResourceTypes(): string[] {
  return [...getR4ResourceTypes(), ...PLATFORM_RESOURCE_TYPES].sort();
}
