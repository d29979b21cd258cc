import type { TestApp } from '../../test/app.js';

export const FHIR = 'application/fhir+json';

/** The test project admin's Authorization header, when the app requires sign-in. */
export function auth(t: TestApp): Record<string, string> {
  return (t as TestApp & { authHeaders?: Record<string, string> }).authHeaders ?? {};
}

export interface SearchBundle {
  resourceType: 'Bundle';
  total?: number;
  link?: { relation: string; url: string }[];
  entry?: {
    fullUrl: string;
    resource: { resourceType: string; id: string; [k: string]: unknown };
    search: { mode: string };
  }[];
}

/** Creates resources through the REST API; returns them as stored. */
export async function createAll<T extends { resourceType: string }>(
  t: TestApp,
  resources: T[],
): Promise<(T & { id: string })[]> {
  const out: (T & { id: string })[] = [];
  for (const r of resources) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/${r.resourceType}`,
      headers: { 'content-type': FHIR, ...auth(t) },
      payload: JSON.stringify(r),
    });
    if (res.statusCode !== 201) {
      throw new Error(`create ${r.resourceType}: ${res.statusCode} ${res.body}`);
    }
    out.push(res.json());
  }
  return out;
}

/** GET a search; fails the test on a non-200 answer. */
export async function search(t: TestApp, url: string, headers: Record<string, string> = {}): Promise<SearchBundle> {
  const res = await t.app.inject({ url: `/fhir/R4/${url}`, headers: { ...auth(t), ...headers } });
  if (res.statusCode !== 200) {
    throw new Error(`GET ${url}: ${res.statusCode} ${res.body}`);
  }
  return res.json() as SearchBundle;
}

/** The ids of the matches, in order. */
export function ids(bundle: SearchBundle): string[] {
  return (bundle.entry ?? []).filter((e) => e.search.mode === 'match').map((e) => e.resource.id);
}

/** Ids of matches, as a sorted list of names given by `names` (id -> name). */
export function names(bundle: SearchBundle, byId: Map<string, string>): string[] {
  return ids(bundle)
    .map((id) => byId.get(id) ?? `?${id}`)
    .sort();
}

export async function status(
  t: TestApp,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.app.inject({ url: `/fhir/R4/${url}`, headers: { ...auth(t), ...headers } });
  return { status: res.statusCode, body: res.json() };
}
