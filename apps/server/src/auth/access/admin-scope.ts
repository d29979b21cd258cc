import { fail, forbiddenWith } from '@hearth/core';
import type { RequestAuth } from '../authenticate.js';
import { parseResourceScopes } from './scopes.js';

/**
 * A token whose SMART scopes narrow what it may do (a third-party app acting for an admin)
 * cannot administer: only unscoped tokens, or ones granted every type, may.
 */
export function assertAdminScope(caller: RequestAuth): void {
  const scopes = parseResourceScopes(caller.scope);
  const everything = scopes.some(
    (s) =>
      s.context !== 'patient' &&
      s.resourceType === '*' &&
      !s.query &&
      ['create', 'read', 'update', 'delete', 'search'].every((i) => s.interactions.has(i as never)),
  );
  if (scopes.length > 0 && !everything) {
    fail(forbiddenWith("This token's scopes do not allow administration"));
  }
}
