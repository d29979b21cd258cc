// What a CQL measure's evaluation needs before its first patient: its libraries read as the caller
// and resolved by cql-execution, its value sets expanded, and its data requirements turned into the
// searches that read the records (a code filter per type where the ELM allows one). Kept between
// evaluations by the MeasureCache (measure-cache.ts says what is kept and for how long).
import type { Library } from 'cql-execution';
import type { Repository } from '../storage/repository.js';
import { resolveLibrary } from './cql-engine.js';
import { declaredValueSets, elmOf, loadLibraries, type Elm } from './library.js';
import type { MeasureCache } from './measure-cache.js';
import type { TypeQuery } from './records.js';
import { dataRequirements, type TypeRequirement } from './requirements.js';
import { ExpandedValueSets } from './value-sets.js';

type Json = Record<string, unknown>;

export interface PreparedLogic {
  library: Library;
  valueSets: ExpandedValueSets;
  requirements: Map<string, TypeRequirement>;
}

export interface PrepareDeps {
  cache: MeasureCache;
  /** A value set's codes as this caller sees the terminology ($expand). */
  expandValueSet(url: string, repo: Repository): Promise<{ system?: string; code: string }[]>;
}

/** The projects whose content the caller reads: what its expansions and libraries depend on (besides access rules). */
function projectsKey(repo: Repository): string {
  const projects = repo.scope.readProjects;
  return projects ? [...projects].sort().join(',') : '*';
}

function versionOf(resource: Json): string {
  return String((resource.meta as { versionId?: string } | undefined)?.versionId ?? '');
}

/** The Measure's libraries (as the caller reads them), resolved, with their value sets expanded. */
export async function prepareLogic(deps: PrepareDeps, repo: Repository, measure: Json): Promise<PreparedLogic> {
  const { cache } = deps;
  const projects = projectsKey(repo);
  const make = async (): Promise<PreparedLogic> => {
    // Each Library version read: its parsed ELM, and the set of them, name what is resolved.
    const read: string[] = [];
    const readElm = (library: Json, where: string): Promise<Elm> => {
      const key = `Library/${String(library.id)}/${versionOf(library)}`;
      read.push(key);
      return cache.content(`elm|${key}`, async () => elmOf(library, where));
    };
    const libraries = await loadLibraries(repo, measure, readElm);
    const { library, requirements } = await cache.content(
      `resolved|${read[0]}|${[...read].sort().join(',')}`,
      async () => ({
        library: resolveLibrary(libraries.all, libraries.main),
        requirements: dataRequirements(libraries.all),
      }),
    );
    const valueSets = await ExpandedValueSets.load(declaredValueSets(libraries.all), (url) =>
      cache.state(`expansion|${projects}|${url}`, () => deps.expandValueSet(url, repo)),
    );
    return { library, valueSets, requirements };
  };
  // With access rules (policies, SMART scopes) the libraries are read again as this caller: what
  // it may read decides which libraries it gets. Their parsed ELM and expansions are still reused.
  if (repo.scope.access) return make();
  return cache.state(`prepared|${projects}|Measure/${String(measure.id)}/${versionOf(measure)}`, make);
}

/**
 * The searches that read the records: one per type the logic retrieves, with a filter on the codes
 * that can match when every Retrieve of the type names its codes (and a token parameter indexes
 * that element); none for a type whose value sets hold no code.
 */
export async function typeQueries(
  logic: PreparedLogic,
  tokenParam: (resourceType: string, element: string) => Promise<string | undefined>,
): Promise<TypeQuery[]> {
  const out: TypeQuery[] = [];
  for (const [type, req] of logic.requirements) {
    if (type === 'Patient') continue;
    if (req.all || !req.property) {
      out.push({ type });
      continue;
    }
    const codes = new Set(req.codes);
    let known = true;
    for (const url of req.valueSets ?? []) {
      const expansion = logic.valueSets.codeStrings(url);
      if (!expansion) known = false;
      expansion?.forEach((c) => codes.add(c));
    }
    if (!known) {
      out.push({ type });
      continue;
    }
    if (codes.size === 0) continue;
    const param = await tokenParam(type, req.property);
    out.push(param ? { type, filter: { param, codes: [...codes].sort() } } : { type });
  }
  return out;
}
