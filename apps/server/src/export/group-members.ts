// The members of a Group export: the Patients its active members reference, each checked readable
// by the requester. Members that cannot be exported are reported as export problems.
import type { Resource } from '@hearth/core';
import { MAX_OR_VALUES } from '../search/query/context.js';
import { searchResources } from '../search/resources.js';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';
import type { ExportProblems } from './export-problems.js';
import { searchableTypes } from './everything.js';

/** Patients per `_id` or `_compartment` list (a search parameter takes at most this many values). */
export const MEMBER_CHUNK = MAX_OR_VALUES;

/** A Patient reference (relative or absolute, optionally versioned): its id. */
const PATIENT_REFERENCE = /^(?:.*\/)?Patient\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[A-Za-z0-9\-.]{1,64})?$/;

interface GroupMember {
  entity?: { reference?: string };
  inactive?: boolean;
}

/**
 * The Patient ids a Group lists as active members (the Group read as the requester: an invisible
 * Group is a 404). An entity that is not a Patient reference, and a Patient the requester cannot
 * read, go to `problems`; inactive members are not members.
 */
export async function groupMembers(
  search: SearchService,
  repo: Repository,
  fhirBase: string,
  groupId: string,
  problems: ExportProblems,
): Promise<string[]> {
  const group = (await repo.readResource('Group', groupId)).resource as Resource & { member?: GroupMember[] };
  /** Each Patient id with the index of the first member naming it. */
  const ids = new Map<string, number>();
  for (const [index, member] of (group.member ?? []).entries()) {
    if (member.inactive) continue;
    const reference = member.entity?.reference;
    const match = PATIENT_REFERENCE.exec(reference ?? '');
    if (!match) problems.memberNotPatient(index, reference);
    else if (!ids.has(match[1])) ids.set(match[1], index);
  }
  for (const id of await unreadablePatients(search, repo, fhirBase, [...ids.keys()])) {
    problems.memberNotReadable(ids.get(id) as number, `Patient/${id}`);
  }
  return [...ids.keys()];
}

/**
 * The ids among `ids` that a Patient search as the requester does not find: one search per chunk,
 * ids only. A requester who may not search Patient at all cannot be told which exist: none is named.
 */
async function unreadablePatients(
  search: SearchService,
  repo: Repository,
  fhirBase: string,
  ids: string[],
): Promise<string[]> {
  if (searchableTypes(repo, ['Patient']).length === 0) return [];
  const missing: string[] = [];
  for (let i = 0; i < ids.length; i += MEMBER_CHUNK) {
    const chunk = ids.slice(i, i + MEMBER_CHUNK);
    const params = new URLSearchParams({
      _id: chunk.join(','),
      _elements: 'id',
      _count: String(chunk.length),
      _total: 'none',
    });
    const page = await searchResources(search, repo, { resourceType: 'Patient', params, fhirBase, strict: false });
    const found = new Set(page.entries.map((e) => e.resource.id));
    missing.push(...chunk.filter((id) => !found.has(id)));
  }
  return missing;
}
