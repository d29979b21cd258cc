/**
 * References between resources (hl7.org/fhir/R4/references.html): making them, reading their
 * parts, and telling resources and references apart.
 */
import type { HumanName, Reference } from '@hearth/fhir-types';
import type { Resource } from './fhir-types.js';
import { formatHumanName, selectHumanName } from './names.js';

/** True for any object with a string `resourceType`. */
export function isResource(value: unknown): value is Resource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { resourceType?: unknown }).resourceType === 'string'
  );
}

/** True for a Reference with a reference string (not a resource). */
export function isReference(value: unknown): value is Reference & { reference: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !('resourceType' in value) &&
    typeof (value as { reference?: unknown }).reference === 'string'
  );
}

/** 'Patient/123' for a resource, or a reference's reference string ('' when there is none). */
export function getReferenceString(input: Resource | Reference | { resourceType: string; id?: string }): string {
  if (isResource(input)) {
    return input.id ? `${input.resourceType}/${input.id}` : '';
  }
  return (input as Reference).reference ?? '';
}

/** A Reference to a resource, with its display name when it has one. */
export function createReference<T extends { resourceType: string; id?: string }>(resource: T): Reference<T> {
  const reference: Reference<T> = { reference: getReferenceString(resource) };
  const display = referenceDisplay(resource as unknown as Resource);
  if (display) {
    reference.display = display;
  }
  return reference;
}

function referenceDisplay(resource: Resource): string | undefined {
  const name = resource.name;
  if (Array.isArray(name) && name.length > 0 && typeof name[0] === 'object') {
    return formatHumanName(selectHumanName(name as HumanName[])) || undefined;
  }
  return typeof name === 'string' ? name : undefined;
}

/**
 * The type and id of a relative reference ('Patient/123', 'Patient/123/_history/2', or an
 * absolute URL ending in one); undefined for contained ('#x'), logical or malformed references.
 */
export function parseReference(
  reference: Reference | string | undefined,
): { resourceType: string; id: string; versionId?: string } | undefined {
  const text = typeof reference === 'string' ? reference : reference?.reference;
  if (!text || text.startsWith('#')) {
    return undefined;
  }
  const match = /(?:^|\/)([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/([A-Za-z0-9\-.]{1,64}))?$/.exec(
    text.split('?')[0],
  );
  if (!match) {
    return undefined;
  }
  return match[3]
    ? { resourceType: match[1], id: match[2], versionId: match[3] }
    : { resourceType: match[1], id: match[2] };
}

/** The id a reference points at ('123' for 'Patient/123'); undefined when it has none. */
export function resolveId(reference: Reference | string | undefined): string | undefined {
  return parseReference(reference)?.id;
}

/** The resource type a reference points at, from its reference string or its `type`. */
export function getReferenceType(reference: Reference | undefined): string | undefined {
  return parseReference(reference)?.resourceType ?? reference?.type;
}
