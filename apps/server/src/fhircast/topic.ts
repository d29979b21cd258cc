import { createHash } from 'node:crypto';
import { fail, forbiddenWith } from '@hearth/core';

/**
 * The FHIRcast topic of a user: one per profile of a project, the same for every application the
 * user signs into (that is what lets them share context), and unrelated between projects. Derived,
 * not stored: the token endpoint hands it out as `hub.topic`, the hub checks each request against it.
 */
export function topicFor(projectId: string, profile: string): string {
  return createHash('sha256').update(`fhircast|${projectId}|${profile}`).digest('base64url').slice(0, 32);
}

/** A 403 unless `topic` is the caller's own. */
export function requireOwnTopic(caller: { projectId: string; profile: string }, topic: string): void {
  if (topic !== topicFor(caller.projectId, caller.profile)) {
    fail(
      forbiddenWith(`hub.topic "${topic}" is not the topic of this token (its hub.topic, given by the token endpoint)`),
    );
  }
}
