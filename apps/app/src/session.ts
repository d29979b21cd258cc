import type { SessionDetails } from '@hearth/core';
import { useAsync, useHearthContext } from '@hearth/react';

/** Who is signed in (GET /auth/me): project, membership (admin?), profile, user. */
export function useSession(): { details: SessionDetails | undefined; loading: boolean; error: unknown } {
  const { client, profile } = useHearthContext();
  const state = useAsync(
    profile ? () => client.getSessionDetails() : undefined,
    profile ? `${profile.resourceType}/${profile.id}` : '',
  );
  return { details: state.data, loading: state.loading, error: state.error };
}

export function isProjectAdmin(details: SessionDetails | undefined): boolean {
  return !!(details?.membership as { admin?: boolean } | undefined)?.admin;
}

export function isSuperAdmin(details: SessionDetails | undefined): boolean {
  return !!(details?.project as { superAdmin?: boolean } | undefined)?.superAdmin;
}

export function projectId(details: SessionDetails | undefined): string | undefined {
  return details?.project?.id;
}
