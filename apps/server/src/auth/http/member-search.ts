import type { RequestAuth } from '../authenticate.js';
import type { AuthModule } from '../module.js';

/**
 * A search run as a project member for the sign-in pages' pickers (patients, encounters): the
 * member's access policy applies, and the parsed searchset comes back.
 */
export async function searchAsMember<T>(
  auth: AuthModule,
  member: RequestAuth,
  fhirBase: string,
  resourceType: string,
  params: URLSearchParams,
): Promise<T> {
  const text = await auth.search.search(auth.repoFor(member), {
    resourceType,
    params,
    fhirBase: `${fhirBase}/`,
    strict: false,
  });
  return JSON.parse(text) as T;
}
