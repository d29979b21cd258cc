// A patient's record for measure evaluation, read through Hearth's search as the caller: the
// Patient, then a Patient compartment search (Patient/{id}/*) limited to the types the measure's
// logic retrieves. Access policies and SMART scopes apply exactly as they do to search.
import type { Bundle, Resource } from '@hearth/core';
import { searchableTypes } from '../export/everything.js';
import { compartmentMemberTypes } from '../search/compartments.js';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';

/** Reads one patient's record (the Patient first); undefined when the caller may not read the Patient. */
export type RecordReader = (patientId: string) => Promise<Resource[] | undefined>;

/** The largest page search serves: fewest round trips per record. */
const PAGE = 1000;

export function compartmentRecords(
  search: SearchService,
  repo: Repository,
  fhirBase: string,
  wantedTypes: string[],
): RecordReader {
  const members = new Set(compartmentMemberTypes('Patient'));
  // Types outside the Patient compartment (Medication, Location...) are not part of one patient's record.
  const types = searchableTypes(
    repo,
    wantedTypes.filter((t) => t !== 'Patient' && members.has(t)),
  );
  return async (patientId) => {
    let patient: Resource;
    try {
      patient = (await repo.readResource('Patient', patientId)).resource;
    } catch (err) {
      if ((err as { outcome?: unknown }).outcome) return undefined;
      throw err;
    }
    const record: Resource[] = [patient];
    if (types.length === 0) return record;
    const params = new URLSearchParams({ _type: types.join(','), _count: String(PAGE) });
    for (;;) {
      const bundle = JSON.parse(
        await search.search(repo, {
          compartment: { resourceType: 'Patient', id: patientId },
          params,
          fhirBase,
          strict: false,
        }),
      ) as Bundle;
      for (const e of bundle.entry ?? []) if (e.resource && e.search?.mode !== 'include') record.push(e.resource);
      const next = bundle.link?.find((l) => l.relation === 'next')?.url;
      const cursor = next ? new URL(next).searchParams.get('_cursor') : null;
      if (!cursor) break;
      params.set('_cursor', cursor);
    }
    return record;
  };
}

/** Every Patient id the caller may search, in pages of the largest size. */
export async function readablePatientIds(search: SearchService, repo: Repository, fhirBase: string): Promise<string[]> {
  const ids: string[] = [];
  const params = new URLSearchParams({ _count: String(PAGE), _elements: 'id' });
  for (;;) {
    const bundle = JSON.parse(
      await search.search(repo, { resourceType: 'Patient', params, fhirBase, strict: false }),
    ) as Bundle;
    for (const e of bundle.entry ?? []) if (e.resource?.id) ids.push(e.resource.id);
    const next = bundle.link?.find((l) => l.relation === 'next')?.url;
    const cursor = next ? new URL(next).searchParams.get('_cursor') : null;
    if (!cursor) break;
    params.set('_cursor', cursor);
  }
  return ids;
}

/**
 * Records in order with up to `ahead` reads in flight, so that the database works while the
 * engine evaluates the previous patient. Each record is handed out once.
 */
export class RecordPrefetcher {
  private readonly pending: Promise<Resource[] | undefined>[] = [];
  private next = 0;

  constructor(
    private readonly ids: string[],
    private readonly read: RecordReader,
    private readonly ahead = 4,
  ) {}

  /** The next patient's record; undefined at the end. Skipped ids (unreadable) answer null records. */
  async take(): Promise<{ id: string; record: Resource[] | undefined } | undefined> {
    const index = this.next - this.pending.length;
    while (this.pending.length < this.ahead && this.next < this.ids.length) {
      const p = this.read(this.ids[this.next++]);
      p.catch(() => undefined); // handled when taken
      this.pending.push(p);
    }
    const first = this.pending.shift();
    if (!first) return undefined;
    return { id: this.ids[index], record: await first };
  }
}
