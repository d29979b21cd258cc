// The patients' records for measure evaluation, read through Hearth's search as the caller (access
// policies and SMART scopes apply exactly as they do to search), a batch of patients at a time:
// the batch's Patients in one search (`Patient?_id=…`, or a page of `Patient?`), then one search
// per resource type the logic reads for the whole batch (`Observation?_compartment=Patient/a,
// Patient/b,…`, with the measure's code filter when it has one), each resource handed to the
// patients whose compartment it is in. A batch is read while the one before it is evaluated, so at
// most two batches are in memory whatever the number of patients.
import { escapeSearchValue, type Bundle, type Resource } from '@hearth/core';
import { searchableTypes } from '../export/everything.js';
import { compartmentMemberTypes } from '../search/compartments.js';
import { MAX_OR_VALUES } from '../search/query/context.js';
import type { SearchInput, SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';

/** One patient's record: the Patient first, then the resources of its compartment the logic reads. */
export type PatientRecord = Resource[];

/** The largest page search serves: fewest round trips. */
const PAGE = 1000;
/** Patients per batch: one search per type reads the batch's data (at most MAX_OR_VALUES). */
export const BATCH = 50;

export interface RecordSource {
  search: SearchService;
  repo: Repository;
  fhirBase: string;
  /** The Patient compartments a resource is in ('Patient/1'), as stored with it (search's compartment parameters). */
  patientCompartments(resource: Resource): string[];
}

/** A resource type to read, with the token parameter and codes that narrow it (a code filter), if any. */
export interface TypeQuery {
  type: string;
  filter?: { param: string; codes: string[] };
}

/** Every page of a search, each resource handed to `onResource` (included ones left out). */
export async function searchAll(
  source: Pick<RecordSource, 'search' | 'repo' | 'fhirBase'>,
  input: Omit<SearchInput, 'fhirBase' | 'strict'>,
  onResource: (resource: Resource) => void,
): Promise<void> {
  const params = new URLSearchParams(input.params);
  for (;;) {
    const bundle = JSON.parse(
      await source.search.search(source.repo, { ...input, params, fhirBase: source.fhirBase, strict: false }),
    ) as Bundle;
    for (const e of bundle.entry ?? []) if (e.resource && e.search?.mode !== 'include') onResource(e.resource);
    const next = bundle.link?.find((l) => l.relation === 'next')?.url;
    const cursor = next ? new URL(next).searchParams.get('_cursor') : null;
    if (!cursor) return;
    params.set('_cursor', cursor);
  }
}

/**
 * The Patients to evaluate, `size` at a time: those among `ids` the caller may read (in the order
 * given), or, without ids, every Patient the caller may search (in pages).
 */
export async function* patientBatches(
  source: Pick<RecordSource, 'search' | 'repo' | 'fhirBase'>,
  ids: string[] | undefined,
  batchSize = BATCH,
): AsyncGenerator<Resource[]> {
  // A search parameter lists at most MAX_OR_VALUES values (the _id and _compartment of a batch).
  const size = Math.max(1, Math.min(batchSize, MAX_OR_VALUES));
  if (!ids) {
    const params = new URLSearchParams({ _count: String(size) });
    for (;;) {
      const bundle = JSON.parse(
        await source.search.search(source.repo, {
          resourceType: 'Patient',
          params,
          fhirBase: source.fhirBase,
          strict: false,
        }),
      ) as Bundle;
      const patients = (bundle.entry ?? []).flatMap((e) => (e.resource ? [e.resource] : []));
      if (patients.length > 0) yield patients;
      const next = bundle.link?.find((l) => l.relation === 'next')?.url;
      const cursor = next ? new URL(next).searchParams.get('_cursor') : null;
      if (!cursor) return;
      params.set('_cursor', cursor);
    }
  }
  for (let i = 0; i < ids.length; i += size) {
    const chunk = ids.slice(i, i + size);
    const found = new Map<string, Resource>();
    await searchAll(
      source,
      { resourceType: 'Patient', params: new URLSearchParams({ _id: chunk.join(','), _count: String(size) }) },
      (p) => found.set(String(p.id), p),
    );
    const patients = chunk.flatMap((id) => found.get(id) ?? []);
    if (patients.length > 0) yield patients;
  }
}

/** The types of the Patient compartment among `wanted` that the caller may search (Patient itself aside). */
export function compartmentTypes(repo: Repository, wanted: TypeQuery[]): TypeQuery[] {
  const members = new Set(compartmentMemberTypes('Patient'));
  // Types outside the Patient compartment (Medication, Location...) are not part of one patient's record.
  const allowed = new Set(
    searchableTypes(
      repo,
      wanted.map((q) => q.type).filter((t) => t !== 'Patient' && members.has(t)),
    ),
  );
  return wanted.filter((q) => allowed.has(q.type));
}

/** The records of a batch of Patients: one search per type for the whole batch. */
export async function batchRecords(
  source: RecordSource,
  types: TypeQuery[],
  patients: Resource[],
): Promise<PatientRecord[]> {
  const records = new Map<string, PatientRecord>(patients.map((p) => [`Patient/${String(p.id)}`, [p]]));
  const compartment = [...records.keys()].map(escapeSearchValue).join(',');
  for (const { type, filter } of types) {
    // A code filter longer than a parameter may be is read in parts: a resource found twice is kept once.
    const parts: (string | undefined)[] = [];
    if (!filter) parts.push(undefined);
    else {
      const codes = filter.codes.map(escapeSearchValue);
      for (let i = 0; i < codes.length; i += MAX_OR_VALUES) parts.push(codes.slice(i, i + MAX_OR_VALUES).join(','));
    }
    const seen = parts.length > 1 ? new Set<string>() : undefined;
    for (const codes of parts) {
      const query = new URLSearchParams({ _compartment: compartment, _count: String(PAGE) });
      if (filter && codes) query.set(filter.param, codes);
      await searchAll(source, { resourceType: type, params: query }, (resource) => {
        if (seen) {
          if (seen.has(String(resource.id))) return;
          seen.add(String(resource.id));
        }
        for (const ref of source.patientCompartments(resource)) records.get(ref)?.push(resource);
      });
    }
  }
  return [...records.values()];
}

/** The batches' records in order, each batch read while the one before it is being evaluated. */
export async function* recordBatches(
  source: RecordSource,
  types: TypeQuery[],
  patients: AsyncIterator<Resource[]>,
): AsyncGenerator<PatientRecord[]> {
  const read = async (): Promise<PatientRecord[] | undefined> => {
    const batch = await patients.next();
    return batch.done ? undefined : batchRecords(source, types, batch.value);
  };
  const ahead = (): Promise<PatientRecord[] | undefined> => {
    const p = read();
    // Read ahead while the consumer is busy: its failure is heard when the consumer takes it
    // (or never, when the consumer stopped), not as an unhandled rejection in between.
    p.catch(() => undefined);
    return p;
  };
  let next = ahead();
  for (;;) {
    const records = await next;
    if (!records) return;
    next = ahead();
    yield records;
  }
}
