/**
 * A patient's record newest first, across resource types, a page at a time. FHIR has no search
 * that sorts several types by their clinical dates (each type's date lives in another element:
 * Observation.effective, Condition.recordedDate, MedicationRequest.authoredOn...), so each type is
 * searched by its own date parameter, descending (`_compartment=Patient/{id}&_sort=-date`), and the
 * sorted streams are merged: an entry is shown only once every type that has more has a buffered
 * entry to compare it with. The searches of one step go together in one batch Bundle
 * (hl7.org/fhir/R4/http.html#transaction).
 */
import type { Bundle, HearthClient, Resource } from '@hearth/core';
import { valuesOf } from '../util/format.js';

/** A member type of the Patient compartment, with the date search parameter that orders it. */
export interface TimelineSource {
  type: string;
  /** A date search parameter's code; without one the type is ordered by _lastUpdated. */
  date?: string;
  /** That parameter's expression, to read an entry's date. */
  expression?: string;
}

export interface TimelineFilter {
  /** Only these types (all sources when empty). */
  types?: string[];
  /** Dates (YYYY-MM-DD), inclusive. */
  from?: string;
  to?: string;
}

export interface TimelineEntry {
  resource: Resource;
  /** The clinical date the entry is ordered by (a dateTime), or when it was last updated. */
  date?: string;
}

interface Stream {
  source: TimelineSource;
  buffer: TimelineEntry[];
  /** The next page's URL, relative to the FHIR base; undefined before the first page. */
  next?: string;
  done: boolean;
}

/** The date an entry is ordered by: its date parameter's first value (a period's start), else meta.lastUpdated. */
export function entryDate(resource: Resource, source: TimelineSource): string | undefined {
  for (const value of (source.expression && valuesOf(resource, source.expression)) || []) {
    if (typeof value === 'string') return value;
    const v = value as { start?: string; end?: string; event?: string[] };
    if (v?.start ?? v?.end) return v.start ?? v.end;
  }
  return resource.meta?.lastUpdated;
}

const time = (date: string | undefined): number => (date ? Date.parse(date) || 0 : 0);

/** The search of one type's entries matching the filter, newest first (relative to the FHIR base). */
export function timelineQuery(
  patientId: string,
  source: TimelineSource,
  filter: TimelineFilter,
  count: number,
): string {
  const param = source.date ?? '_lastUpdated';
  const query = new URLSearchParams({
    _compartment: `Patient/${patientId}`,
    _sort: `-${param}`,
    _count: String(count),
  });
  if (filter.from) query.append(param, `ge${filter.from}`);
  if (filter.to) query.append(param, `le${filter.to}`);
  return `${source.type}?${query.toString()}`;
}

export class TimelinePager {
  private readonly streams: Stream[];
  private readonly base: string;

  constructor(
    private readonly client: HearthClient,
    private readonly patientId: string,
    sources: TimelineSource[],
    private readonly filter: TimelineFilter,
    private readonly pageSize = 20,
  ) {
    const wanted = filter.types?.length ? sources.filter((s) => filter.types?.includes(s.type)) : sources;
    this.streams = wanted.map((source) => ({ source, buffer: [], done: false }));
    this.base = client.fhirUrl('');
  }

  /** Whether anything is left to show. */
  get hasMore(): boolean {
    return this.streams.some((s) => s.buffer.length > 0 || !s.done);
  }

  /** The next `pageSize` entries, newest first. */
  async nextPage(): Promise<TimelineEntry[]> {
    const page: TimelineEntry[] = [];
    while (page.length < this.pageSize) {
      await this.refill();
      let newest: Stream | undefined;
      for (const s of this.streams) {
        if (s.buffer.length && (!newest || time(s.buffer[0].date) > time(newest.buffer[0].date))) newest = s;
      }
      if (!newest) break;
      page.push(newest.buffer.shift() as TimelineEntry);
    }
    return page;
  }

  /** Fetches the next page of every stream that has run dry and has more, in one batch. */
  private async refill(): Promise<void> {
    const dry = this.streams.filter((s) => s.buffer.length === 0 && !s.done);
    if (!dry.length) return;
    const response = await this.client.executeBatch({
      resourceType: 'Bundle',
      type: 'batch',
      entry: dry.map((s) => ({
        request: {
          method: 'GET',
          url: s.next ?? timelineQuery(this.patientId, s.source, this.filter, this.pageSize),
        },
      })),
    });
    dry.forEach((s, i) => {
      const entry = response.entry?.[i];
      const status = entry?.response?.status ?? '';
      if (!status.startsWith('200')) {
        // A type the caller may not search (an access policy) has nothing to show.
        s.done = true;
        return;
      }
      const bundle = entry?.resource as Bundle | undefined;
      const resources = (bundle?.entry ?? [])
        .filter((e) => e.search?.mode !== 'include')
        .map((e) => e.resource as Resource)
        .filter(Boolean);
      s.buffer.push(...resources.map((resource) => ({ resource, date: entryDate(resource, s.source) })));
      const next = bundle?.link?.find((l) => l.relation === 'next')?.url;
      s.next = next?.startsWith(this.base) ? next.slice(this.base.length) : next;
      s.done = !next || resources.length === 0;
    });
  }
}

/**
 * How many resources of each type the patient has within the filter's dates, in one batch of
 * `_summary=count` searches; types with none are left out.
 */
export async function countTimeline(
  client: HearthClient,
  patientId: string,
  sources: TimelineSource[],
  filter: Omit<TimelineFilter, 'types'>,
): Promise<Record<string, number>> {
  const response = await client.executeBatch({
    resourceType: 'Bundle',
    type: 'batch',
    entry: sources.map((s) => ({
      request: { method: 'GET', url: `${timelineQuery(patientId, s, filter, 0)}&_summary=count` },
    })),
  });
  const counts: Record<string, number> = {};
  sources.forEach((s, i) => {
    const total = (response.entry?.[i]?.resource as Bundle | undefined)?.total ?? 0;
    if (total > 0) counts[s.type] = total;
  });
  return counts;
}
