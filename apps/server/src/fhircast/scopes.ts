// FHIRcast's SMART scopes: `fhircast/{event}.read` (subscribe to it), `fhircast/{event}.write`
// (publish it), `.*` for both, `*` for every event (fhircast.org, "Authorization").
import { forbiddenWith, fail } from '@hearth/core';

export type FhircastAccess = 'read' | 'write';

export interface FhircastScope {
  /** An event name in lower case, or '*'. */
  event: string;
  access: Set<FhircastAccess>;
}

const PATTERN = /^fhircast\/([A-Za-z]+-[A-Za-z]+|\*)\.(read|write|\*)$/;

/** One FHIRcast scope, or undefined when the text is not one. */
export function parseFhircastScope(text: string): FhircastScope | undefined {
  const m = PATTERN.exec(text);
  if (!m) {
    return undefined;
  }
  const access = new Set<FhircastAccess>(m[2] === '*' ? ['read', 'write'] : [m[2] as FhircastAccess]);
  return { event: m[1].toLowerCase(), access };
}

export function isFhircastScope(text: string): boolean {
  return parseFhircastScope(text) !== undefined;
}

/** Who calls the hub: the project and profile of the token, its scopes, and whether it is Hearth's own app. */
export interface FhircastCaller {
  projectId: string;
  /** The membership's profile (`Practitioner/…`): a topic belongs to one profile of one project. */
  profile: string;
  scope: string;
  /**
   * A sign-in without a client application (Hearth's own app, /auth/login). Such a session that
   * asked for no FHIRcast scope acts on its own topic with every event, as a session without
   * resource scopes is narrowed by nothing but its membership.
   */
  firstParty: boolean;
}

function scopesOf(caller: FhircastCaller): FhircastScope[] {
  return caller.scope
    .split(/\s+/)
    .map(parseFhircastScope)
    .filter((s): s is FhircastScope => s !== undefined);
}

/** Whether the caller may read (subscribe to) or write (publish) an event. */
export function mayUse(caller: FhircastCaller, event: string, access: FhircastAccess): boolean {
  const scopes = scopesOf(caller);
  if (scopes.length === 0) {
    return caller.firstParty;
  }
  const lower = event.toLowerCase();
  return scopes.some((s) => (s.event === '*' || s.event === lower) && s.access.has(access));
}

/** A 403 unless the caller holds the scope for every event given. */
export function requireScopes(caller: FhircastCaller, events: string[], access: FhircastAccess): void {
  const missing = events.filter((e) => !mayUse(caller, e, access));
  if (missing.length > 0) {
    fail(
      forbiddenWith(
        `The token lacks the scope to ${access === 'read' ? 'subscribe to' : 'publish'} ${missing.join(', ')}: ask for ${missing
          .map((e) => `fhircast/${e}.${access}`)
          .join(' ')} (or fhircast/*.${access})`,
      ),
    );
  }
}
