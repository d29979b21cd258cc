import { isFhircastScope } from '../../fhircast/scopes.js';
import type { AccessInteraction } from '../types.js';

/**
 * SMART on FHIR scopes (hl7.org/fhir/smart-app-launch/scopes-and-launch-context.html):
 * v1 `patient/Observation.read`, `user/*.write`, `system/*.*`; v2 `patient/Observation.rs`,
 * `user/Encounter.cruds?status=finished`. Other scopes (openid, fhirUser, profile, email,
 * offline_access, online_access, launch, launch/patient, launch/encounter) carry no resource access.
 */
export interface ResourceScope {
  context: 'patient' | 'user' | 'system';
  /** A resource type, or '*' for every type. */
  resourceType: string;
  interactions: Set<AccessInteraction>;
  /** v2 only: a FHIR search the resource must also match (`category=laboratory`). */
  query?: string;
  /** The scope as written. */
  text: string;
}

const V2_LETTERS: Record<string, AccessInteraction[]> = {
  c: ['create'],
  r: ['read', 'vread', 'history'],
  u: ['update'],
  d: ['delete'],
  s: ['search'],
};

const READ: AccessInteraction[] = ['read', 'vread', 'history', 'search'];
const WRITE: AccessInteraction[] = ['create', 'update', 'delete'];

export function splitScope(scope: string | undefined): string[] {
  return (scope ?? '').split(/\s+/).filter(Boolean);
}

export function hasScope(scope: string | undefined, name: string): boolean {
  return splitScope(scope).includes(name);
}

/** Parses one resource scope; undefined for scopes that are not about resources or are malformed. */
export function parseResourceScope(text: string): ResourceScope | undefined {
  const m = /^(patient|user|system)\/([A-Za-z]+|\*)\.([a-z*]+)(?:\?(.*))?$/.exec(text);
  if (!m) {
    return undefined;
  }
  const [, context, resourceType, access, query] = m;
  const interactions = new Set<AccessInteraction>();
  if (access === 'read' || access === '*' || access === 'write') {
    if (query !== undefined) {
      return undefined; // v1 scopes carry no query
    }
    if (access !== 'write') {
      READ.forEach((i) => interactions.add(i));
    }
    if (access !== 'read') {
      WRITE.forEach((i) => interactions.add(i));
    }
  } else {
    // v2: letters from "cruds", each at most once, in that order.
    if (!/^c?r?u?d?s?$/.test(access) || access === '') {
      return undefined;
    }
    for (const letter of access) {
      V2_LETTERS[letter].forEach((i) => interactions.add(i));
    }
  }
  return {
    context: context as ResourceScope['context'],
    resourceType,
    interactions,
    query: query || undefined,
    text,
  };
}

/** Every resource scope in a scope string; malformed ones are left out. */
export function parseResourceScopes(scope: string | undefined): ResourceScope[] {
  return splitScope(scope)
    .map(parseResourceScope)
    .filter((s): s is ResourceScope => s !== undefined);
}

const KNOWN_SCOPES = new Set([
  'openid',
  'fhirUser',
  'profile',
  'email',
  'offline_access',
  'online_access',
  'launch',
  'launch/patient',
  'launch/encounter',
]);

/** True for a scope this server understands (anything else is dropped from the granted scope). */
export function isKnownScope(text: string): boolean {
  return KNOWN_SCOPES.has(text) || parseResourceScope(text) !== undefined || isFhircastScope(text);
}
