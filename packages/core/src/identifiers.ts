/** Business identifiers (hl7.org/fhir/R4/datatypes.html#Identifier) of resources. */
import type { Identifier } from '@hearth/fhir-types';

type WithIdentifiers = { identifier?: Identifier[] | Identifier };

function identifiersOf(resource: WithIdentifiers | undefined): Identifier[] {
  const value = resource?.identifier;
  return Array.isArray(value) ? value : value ? [value] : [];
}

/** The value of the resource's identifier in `system`, if it has one. */
export function getIdentifier(resource: WithIdentifiers | undefined, system: string): string | undefined {
  return identifiersOf(resource).find((i) => i.system === system)?.value;
}

/** Sets (replacing) the resource's identifier in `system`. Mutates and returns the resource. */
export function setIdentifier<T extends { identifier?: Identifier[] }>(resource: T, system: string, value: string): T {
  const others = (resource.identifier ?? []).filter((i) => i.system !== system);
  resource.identifier = [...others, { system, value }];
  return resource;
}

/** 'system|value', the token search form of an identifier. */
export function formatIdentifier(identifier: Identifier | undefined): string {
  if (!identifier) {
    return '';
  }
  return identifier.system ? `${identifier.system}|${identifier.value ?? ''}` : (identifier.value ?? '');
}
