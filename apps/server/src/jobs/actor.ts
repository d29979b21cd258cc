import { badRequest, fail, type Reference } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { Repository } from '../storage/repository.js';
import { parseStored } from '../storage/serialize.js';
import type { RepositoryDeps, RepositoryScope } from '../storage/types.js';
import { TtlCache } from '../platform/ttl-cache.js';

/**
 * Repositories acting as a project member, for work done on a member's behalf outside any request:
 * a bot run acts as the bot's own membership; a subscription delivery reads as the subscription's
 * author. The member's access policy applies exactly as it would to their own requests.
 */
export interface MemberRepositories {
  /** Forgets cached memberships and scopes (a membership, policy or project changed). */
  invalidate(): void;
  /**
   * A repository acting as the active membership whose profile is `profile` ("Bot/1",
   * "Practitioner/2") in `projectId`. Throws a 400 naming the problem when there is none.
   */
  forProfile(projectId: string, profile: string): Promise<Repository>;
}

/** Builds the access part of a member's scope (auth/: access policy, linked projects, admin role). */
export type MemberScopeBuilder = (membershipReference: string, profile: Reference) => Promise<RepositoryScope>;

interface MembershipRow {
  id: string;
  active?: boolean;
  profile?: Reference;
}

/**
 * Finds the membership of a profile and scopes a repository to it. `scopeOf` (from auth/) adds the
 * member's access rules; without it the member reads and writes its own project only.
 */
export function memberRepositories(
  deps: RepositoryDeps,
  db: Queryable,
  scopeOf?: MemberScopeBuilder,
): MemberRepositories {
  // Scopes are reused for a few seconds (as signed-in sessions are); writes in this process clear them.
  const scopes = new TtlCache<RepositoryScope>(5000);
  const load = async (projectId: string, profile: string): Promise<RepositoryScope> => {
    const result = await db.query<{ content: string }>(
      `SELECT content FROM "ProjectMembership"
       WHERE project_id = $1::uuid AND NOT deleted AND (nullif(content, '')::jsonb)->'profile'->>'reference' = $2
       LIMIT 2`,
      [projectId, profile],
    );
    const memberships = result.rows.map((r) => parseStored(r.content) as unknown as MembershipRow);
    const membership = memberships.find((m) => m.active !== false);
    if (!membership) {
      fail(badRequest(`${profile} has no active membership in project ${projectId}`));
    }
    const ref = { reference: profile };
    return scopeOf
      ? scopeOf(`ProjectMembership/${membership.id}`, ref)
      : { projectId, readProjects: [projectId], author: ref };
  };
  return {
    async forProfile(projectId, profile) {
      return new Repository(deps, await scopes.get(`${projectId}|${profile}`, () => load(projectId, profile)));
    },
    invalidate() {
      scopes.clear();
    },
  };
}
