// A Measure's logic: its Libraries read through the caller's repository (so a Library the caller
// may not read is not there), the ELM JSON of each (Library.content `application/elm+json`), and
// every library they include, followed by name/namespace and version (cql.hl7.org/03-developersguide.html#libraries).
import { badRequest, fail, unprocessable } from '@hearth/core';
import type { Repository } from '../storage/repository.js';

type Json = Record<string, unknown>;

export const ELM_JSON = 'application/elm+json';

/** The ELM of one library: `library.identifier` ({ id, system?, version? }), includes, valueSets… */
export interface Elm {
  library: {
    identifier: { id: string; system?: string; version?: string };
    includes?: { def?: { localIdentifier: string; path: string; version?: string }[] };
    valueSets?: { def?: { name: string; id: string; version?: string }[] };
    statements?: { def?: { name: string; context?: string; type?: string }[] };
    [key: string]: unknown;
  };
}

export interface LoadedLibraries {
  /** The Measure's main library (Measure.library[0]). */
  main: Elm;
  /** Every library by `system/id|version`: what cql-execution's Repository takes. */
  all: Elm[];
}

/** url and version of a canonical `url|version`. */
export function splitCanonical(canonical: string): { url: string; version?: string } {
  const bar = canonical.indexOf('|');
  return bar < 0
    ? { url: canonical }
    : { url: canonical.slice(0, bar), version: canonical.slice(bar + 1) || undefined };
}

/** The one resource of a type with this canonical url (and version), read as the caller; 422 when none or ambiguous. */
export async function findByCanonical(
  repo: Repository,
  resourceType: 'Measure' | 'Library',
  canonical: string,
  where: string,
): Promise<Json> {
  const { url, version } = splitCanonical(canonical);
  const query = new URLSearchParams({ url });
  if (version) query.set('version', version);
  const ids = await repo.findMatches(resourceType, query.toString(), 2);
  if (ids.length === 0) fail(unprocessable(`No ${resourceType} has the url ${canonical}`, where));
  if (ids.length > 1) {
    fail(
      unprocessable(`More than one ${resourceType} has the url ${canonical}: give its version (url|version)`, where),
    );
  }
  return (await repo.readResource(resourceType, ids[0])).resource as unknown as Json;
}

/** The ELM JSON of a Library, decoded from its base64 content; 422 when it has none or it is not ELM. */
export function elmOf(library: Json, where: string): Elm {
  const contents = (library.content as Json[] | undefined) ?? [];
  const content = contents.find((c) => typeof c.contentType === 'string' && c.contentType.startsWith(ELM_JSON));
  const name = `Library/${String(library.id)}`;
  if (!content) {
    const types = contents.map((c) => String(c.contentType)).join(', ') || 'none';
    fail(
      unprocessable(
        `${name} has no ${ELM_JSON} content (it has: ${types}); Hearth runs CQL compiled to ELM JSON`,
        `${where}.content`,
      ),
    );
  }
  if (typeof content.data !== 'string') {
    fail(unprocessable(`${name}: the ${ELM_JSON} content must be inline (content.data, base64)`, `${where}.content`));
  }
  let elm: Elm;
  try {
    elm = JSON.parse(Buffer.from(content.data, 'base64').toString('utf8')) as Elm;
  } catch (e) {
    fail(unprocessable(`${name}: the ${ELM_JSON} content is not JSON (${(e as Error).message})`, `${where}.content`));
  }
  if (!elm?.library?.identifier?.id) {
    fail(unprocessable(`${name}: the ${ELM_JSON} content has no library.identifier`, `${where}.content`));
  }
  return elm;
}

/** The canonical url of an included library: `{namespace uri}/Library/{name}` for a namespaced path. */
function includedCanonical(path: string): { url?: string; name: string } {
  const slash = path.lastIndexOf('/');
  if (slash < 0) return { name: path };
  return { url: `${path.slice(0, slash)}/Library/${path.slice(slash + 1)}`, name: path.slice(slash + 1) };
}

/** A Library's ELM: elmOf, or the same from a cache keyed by the Library's version. */
export type ElmReader = (library: Json, where: string) => Elm | Promise<Elm>;

/** Reads the main library by canonical and, depth first, every library it includes. */
export async function loadLibraries(
  repo: Repository,
  measure: Json,
  readElm: ElmReader = elmOf,
): Promise<LoadedLibraries> {
  const canonicals = (measure.library as string[] | undefined) ?? [];
  if (canonicals.length === 0) {
    fail(unprocessable(`Measure/${String(measure.id)} names no library (Measure.library)`, 'Measure.library'));
  }
  if (canonicals.length > 1) {
    fail(unprocessable('Hearth evaluates Measures with one main library (Measure.library)', 'Measure.library'));
  }
  const all = new Map<string, Elm>();
  const load = async (library: Json, where: string): Promise<Elm> => {
    const elm = await readElm(library, where);
    const { id, system, version } = elm.library.identifier;
    const key = `${system ?? ''}/${id}|${version ?? ''}`;
    if (all.has(key)) return all.get(key) as Elm;
    all.set(key, elm);
    for (const inc of elm.library.includes?.def ?? []) {
      const { url, name } = includedCanonical(inc.path);
      const already = [...all.values()].find(
        (e) => e.library.identifier.id === name && (!inc.version || e.library.identifier.version === inc.version),
      );
      if (already) continue;
      const at = `Library/${String(library.id)} include ${inc.path}${inc.version ? `|${inc.version}` : ''}`;
      let included: Json;
      if (url) {
        included = await findByCanonical(repo, 'Library', inc.version ? `${url}|${inc.version}` : url, at);
      } else {
        const query = new URLSearchParams({ name });
        if (inc.version) query.set('version', inc.version);
        const ids = await repo.findMatches('Library', query.toString(), 2);
        if (ids.length !== 1) {
          fail(unprocessable(`${at}: ${ids.length === 0 ? 'no' : 'more than one'} Library has the name ${name}`, at));
        }
        included = (await repo.readResource('Library', ids[0])).resource as unknown as Json;
      }
      await load(included, at);
    }
    return elm;
  };
  const main = await load(await findByCanonical(repo, 'Library', canonicals[0], 'Measure.library'), 'Measure.library');
  return { main, all: [...all.values()] };
}

/** The Measure of the call: the instance, or `measure` (a canonical url or Measure/{id}) at type level. */
export async function findMeasure(
  repo: Repository,
  id: string | undefined,
  measure: string | undefined,
): Promise<Json> {
  if (id) return (await repo.readResource('Measure', id)).resource as unknown as Json;
  if (!measure) {
    fail(
      badRequest('Measure/$evaluate-measure at type level needs measure (a canonical url or Measure/{id})', 'measure'),
    );
  }
  const byId = /^Measure\/([A-Za-z0-9\-.]{1,64})$/.exec(measure);
  if (byId) return (await repo.readResource('Measure', byId[1])).resource as unknown as Json;
  return findByCanonical(repo, 'Measure', measure, 'measure');
}

/** The value set urls the libraries declare (`valueset "x": 'url'`). */
export function declaredValueSets(libraries: Elm[]): string[] {
  return [...new Set(libraries.flatMap((l) => (l.library.valueSets?.def ?? []).map((d) => d.id)))];
}
