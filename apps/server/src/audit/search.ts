// AuditEvent search over the trail (hl7.org/fhir/R4/auditevent.html#search): agent, entity,
// patient, date, action, outcome, type and _id, newest first, keyset-paged.
import { badRequest, fail } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { storedEventText } from './stored-entry.js';

export const DEFAULT_COUNT = 20;
export const MAX_COUNT = 1000;

const SORTS = new Set(['date', '-date', '_lastUpdated', '-_lastUpdated']);
const PARAMS = new Set([
  'agent',
  'entity',
  'patient',
  'date',
  'action',
  'outcome',
  'type',
  '_id',
  '_count',
  '_cursor',
  '_sort',
  '_format',
  '_pretty',
  '_total',
]);

interface Cursor {
  recorded: string;
  seq: number;
}

/** A reference parameter's values (comma = any of them): relative references, the base stripped. */
function references(values: string, fhirBase: string, defaultType?: string): string[] {
  return values.split(',').map((v) => {
    let ref = v.trim();
    if (ref.startsWith(fhirBase)) ref = ref.slice(fhirBase.length);
    if (!ref.includes('/') && defaultType) ref = `${defaultType}/${ref}`;
    if (!/^[A-Za-z]+\/[A-Za-z0-9\-.]{1,64}$/.test(ref)) {
      fail(badRequest(`"${v}" is not a reference like Type/id`, 'agent|entity|patient'));
    }
    return ref;
  });
}

/** [start, end) of a FHIR date or dateTime at its precision. */
export function dateRange(value: string): [Date, Date] | undefined {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?)?)?$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, time] = m;
  if (time) {
    const start = new Date(`${y}-${mo}-${d}${time}${/Z|[+-]\d{2}:\d{2}$/.test(time) ? '' : 'Z'}`);
    if (Number.isNaN(start.getTime())) return undefined;
    const precisionMs = time.length <= 6 ? 60_000 : time.includes('.') ? 1 : 1000;
    return [start, new Date(start.getTime() + precisionMs)];
  }
  const year = Number(y);
  if (d)
    return [
      new Date(Date.UTC(year, Number(mo) - 1, Number(d))),
      new Date(Date.UTC(year, Number(mo) - 1, Number(d) + 1)),
    ];
  if (mo) return [new Date(Date.UTC(year, Number(mo) - 1, 1)), new Date(Date.UTC(year, Number(mo), 1))];
  return [new Date(Date.UTC(year, 0, 1)), new Date(Date.UTC(year + 1, 0, 1))];
}

export interface TrailSearchInput {
  projectId: string;
  params: URLSearchParams;
  fhirBase: string;
}

/** Runs a search on a project's trail; answers a searchset Bundle as JSON text. */
export async function searchTrail(db: Queryable, input: TrailSearchInput): Promise<string> {
  const { params, fhirBase } = input;
  const values: unknown[] = [input.projectId];
  const p = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const where = ['project_id = $1'];
  for (const [rawName, value] of params) {
    const name = rawName.split(':')[0];
    if (!PARAMS.has(name)) {
      fail(
        badRequest(
          `Unknown AuditEvent search parameter "${rawName}" (the trail searches ${[...PARAMS].filter((n) => !n.startsWith('_') || n === '_id').join(', ')})`,
          rawName,
        ),
      );
    }
    switch (name) {
      case 'agent':
      case 'entity':
        where.push(`${name} && ${p(references(value, fhirBase))}::text[]`);
        break;
      case 'patient':
        where.push(`patient && ${p(references(value, fhirBase, 'Patient'))}::text[]`);
        break;
      case 'date':
        where.push(dateCondition(value, p));
        break;
      case 'action': {
        const actions = value.split(',');
        if (actions.some((a) => !['C', 'R', 'U', 'D', 'E'].includes(a)))
          fail(badRequest(`action must be C, R, U, D or E, not "${value}"`, 'action'));
        where.push(`action = ANY(${p(actions)}::bpchar[])`);
        break;
      }
      case 'outcome': {
        const outcomes = value.split(',');
        if (outcomes.some((o) => !['0', '4', '8', '12'].includes(o)))
          fail(badRequest(`outcome must be 0, 4, 8 or 12, not "${value}"`, 'outcome'));
        where.push(`outcome = ANY(${p(outcomes)}::text[])`);
        break;
      }
      case 'type':
        where.push(`type_code = ANY(${p(value.split(',').map((t) => t.split('|').pop() ?? t))}::text[])`);
        break;
      case '_id':
        where.push(`id = ANY(${p(value.split(','))}::text[])`);
        break;
      case '_sort':
        // An entry is written once, when recorded: its _lastUpdated is its date.
        if (!SORTS.has(value))
          fail(badRequest('The trail sorts by date (or _lastUpdated), ascending or descending', '_sort'));
        break;
    }
  }
  const ascending = !(params.get('_sort') ?? '-date').startsWith('-');
  const count = countOf(params.get('_count'));
  const cursorText = params.get('_cursor');
  if (cursorText) {
    const cursor = decodeCursor(cursorText);
    where.push(
      `(recorded, seq) ${ascending ? '>' : '<'} (${p(cursor.recorded)}::timestamptz, ${p(cursor.seq)}::bigint)`,
    );
  }
  const order = ascending ? 'recorded, seq' : 'recorded DESC, seq DESC';
  const rows = await db.query<{ content: string; recorded: Date; seq: string; id: string }>(
    `SELECT content, recorded, seq, id FROM audit_event WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${count + 1}`,
    values,
  );
  const page = rows.rows.slice(0, count);
  const self = `${fhirBase}AuditEvent?${withoutCursor(params).toString()}`;
  const links = [{ relation: 'self', url: cursorText ? `${self}&_cursor=${encodeURIComponent(cursorText)}` : self }];
  if (rows.rows.length > count && page.length) {
    const last = page[page.length - 1];
    const next = encodeCursor({ recorded: last.recorded.toISOString(), seq: Number(last.seq) });
    links.push({ relation: 'next', url: `${self}&_cursor=${encodeURIComponent(next)}` });
  }
  const head = {
    resourceType: 'Bundle',
    type: 'searchset',
    ...(rows.rows.length <= count && !cursorText ? { total: page.length } : {}),
    link: links,
  };
  const entries = page.map(
    (r) =>
      `{"fullUrl":${JSON.stringify(`${fhirBase}AuditEvent/${r.id}`)},"resource":${storedEventText(input.projectId, r.content)},"search":{"mode":"match"}}`,
  );
  return `${JSON.stringify(head).slice(0, -1)},"entry":[${entries.join(',')}]}`;
}

function dateCondition(value: string, p: (v: unknown) => string): string {
  const m = /^(eq|ne|ge|gt|le|lt|sa|eb)?(.*)$/.exec(value) as RegExpExecArray;
  const prefix = m[1] ?? 'eq';
  const range = dateRange(m[2]);
  if (!range) fail(badRequest(`date "${value}" is not a FHIR date or dateTime`, 'date'));
  const [start, end] = range.map((d) => d.toISOString());
  switch (prefix) {
    case 'eq':
      return `recorded >= ${p(start)}::timestamptz AND recorded < ${p(end)}::timestamptz`;
    case 'ne':
      return `(recorded < ${p(start)}::timestamptz OR recorded >= ${p(end)}::timestamptz)`;
    case 'ge':
      return `recorded >= ${p(start)}::timestamptz`;
    case 'gt':
    case 'sa':
      return `recorded >= ${p(end)}::timestamptz`;
    case 'le':
      return `recorded < ${p(end)}::timestamptz`;
    default:
      return `recorded < ${p(start)}::timestamptz`;
  }
}

function countOf(value: string | null): number {
  if (value === null) return DEFAULT_COUNT;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(badRequest('_count must be a positive whole number', '_count'));
  return Math.min(n, MAX_COUNT);
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    const cursor = JSON.parse(Buffer.from(text, 'base64url').toString()) as Cursor;
    if (
      typeof cursor.recorded === 'string' &&
      !Number.isNaN(Date.parse(cursor.recorded)) &&
      Number.isInteger(cursor.seq)
    ) {
      return cursor;
    }
  } catch {
    // Answered below.
  }
  fail(badRequest('_cursor is not one this server gave out', '_cursor'));
}

function withoutCursor(params: URLSearchParams): URLSearchParams {
  const copy = new URLSearchParams(params);
  copy.delete('_cursor');
  return copy;
}
