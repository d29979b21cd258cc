// hl7.org/fhir/R4/http.html#history
import { badRequest, fail, type Bundle, type BundleEntry } from '@hearth/core';
import { parseDateBound } from './dates.js';
import type { CurrentRow } from '../storage/sql/versions.js';
import type { Repository } from '../storage/repository.js';

export const DEFAULT_COUNT = 20;
export const MAX_COUNT = 1000;

export interface HistoryParams {
  resourceType?: string;
  id?: string;
}

/**
 * One page of instance, type or system history as a Bundle's JSON text, newest first (the history
 * interaction, GET entries of batch Bundles, bots' client). Paging is by keyset cursor (_cursor), so
 * a deep page costs what the first costs; no total is counted (an unbounded COUNT would be the costly part).
 */
export async function historyBundleText(
  repo: Repository,
  fhirBase: string,
  target: HistoryParams,
  q: Record<string, string | string[] | undefined>,
): Promise<string> {
  const { resourceType, id } = target;
  const one = (name: string): string | undefined => {
    const v = q[name];
    if (Array.isArray(v)) {
      fail(badRequest(`${name} may be given once`, name));
    }
    return v;
  };
  const count = parseCount(one('_count'));
  const sinceText = one('_since');
  const since = sinceText ? parseDateBound(sinceText, '_since').start : undefined;
  const atText = one('_at');
  const at = atText ? parseDateBound(atText, '_at') : undefined;
  const cursorText = one('_cursor');
  const before = cursorText ? decodeCursor(cursorText) : undefined;

  const { rows, hasMore } = await repo.readHistory({
    resourceType,
    id,
    count,
    since,
    atStart: at?.start,
    atEnd: at?.end,
    before,
  });

  const path = [resourceType, id].filter(Boolean).join('/');
  const selfBase = `${fhirBase}${path ? path + '/' : ''}_history`;
  const keep = new URLSearchParams();
  for (const name of ['_count', '_since', '_at']) {
    const v = one(name);
    if (v !== undefined) {
      keep.set(name, v);
    }
  }
  const link = [{ relation: 'self', url: withQuery(selfBase, keep, cursorText) }];
  link.push({ relation: 'first', url: withQuery(selfBase, keep) });
  if (hasMore) {
    link.push({ relation: 'next', url: withQuery(selfBase, keep, encodeCursor(rows[rows.length - 1])) });
  }
  const bundle: Bundle = { resourceType: 'Bundle', type: 'history', link };
  // Entries are spliced in as stored text: history pages are served without re-serialising resources.
  const entries = rows.map((row) => historyEntryText(row, fhirBase));
  const head = JSON.stringify(bundle).slice(0, -1);
  return `${head},"entry":[${entries.join(',')}]}`;
}

function historyEntryText(row: CurrentRow, fhirBase: string): string {
  const fullUrl = `${fhirBase}${row.resourceType}/${row.id}`;
  const request: NonNullable<BundleEntry['request']> = row.deleted
    ? { method: 'DELETE', url: `${row.resourceType}/${row.id}` }
    : row.versionId === 1
      ? { method: 'POST', url: row.resourceType }
      : { method: 'PUT', url: `${row.resourceType}/${row.id}` };
  const response = {
    status: row.deleted ? '204' : row.versionId === 1 ? '201' : '200',
    etag: `W/"${row.versionId}"`,
    lastModified: row.lastUpdated.toISOString(),
  };
  const parts = [`"fullUrl":${JSON.stringify(fullUrl)}`];
  if (!row.deleted) {
    parts.push(`"resource":${row.content}`);
  }
  parts.push(`"request":${JSON.stringify(request)}`, `"response":${JSON.stringify(response)}`);
  return `{${parts.join(',')}}`;
}

export function parseCount(value: string | undefined): number {
  if (value === undefined || value === '') {
    return DEFAULT_COUNT;
  }
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    fail(badRequest('_count must be a whole number', '_count'));
  }
  return Math.min(n, MAX_COUNT);
}

function withQuery(base: string, params: URLSearchParams, cursor?: string): string {
  const p = new URLSearchParams(params);
  if (cursor) {
    p.set('_cursor', cursor);
  }
  const s = p.toString();
  return s ? `${base}?${s}` : base;
}

function encodeCursor(row: CurrentRow): string {
  return Buffer.from(
    JSON.stringify([row.lastUpdated.toISOString(), row.resourceType, row.id, row.versionId]),
    'utf8',
  ).toString('base64url');
}

function decodeCursor(text: string): { lastUpdated: Date; resourceType: string; id: string; versionId: number } {
  try {
    const [t, resourceType, id, versionId] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [
      string,
      string,
      string,
      number,
    ];
    const lastUpdated = new Date(t);
    if (
      Number.isNaN(lastUpdated.getTime()) ||
      typeof resourceType !== 'string' ||
      typeof id !== 'string' ||
      !Number.isInteger(versionId)
    ) {
      throw new Error('bad cursor');
    }
    return { lastUpdated, resourceType, id, versionId };
  } catch {
    fail(badRequest('Invalid _cursor', '_cursor'));
  }
}
