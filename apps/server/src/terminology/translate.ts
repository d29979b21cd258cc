import type { Coding, ConceptMap } from '@hearth/core';
import type { Queryable } from '../platform/postgres.js';
import { flattenConceptMap, mapGroups, type MapElementRow } from './store/maps-and-value-sets.js';
import type { ConceptMapRow } from './resolve.js';

/** One candidate mapping of a source coding (R4 $translate output `match`). */
export interface TranslateMatch {
  equivalence: string;
  concept?: Coding;
  /** The canonical of the ConceptMap that gave it. */
  source?: string;
  product?: { element?: string; concept: Coding }[];
}

/** Platform shape of $translate's output: Parameters result, message, match. */
export interface ConceptMapTranslateOutput {
  result: boolean;
  message?: string;
  match: TranslateMatch[];
}

export interface TranslateRequest {
  codings: Coding[];
  targetSystem?: string;
  reverse?: boolean;
  /** $translate `dependency`: element (a dependsOn property) → codings it has in this context. */
  dependencies?: { element?: string; codings: Coding[] }[];
}

/** The maps to use: stored ones, or one given inline in the request. */
export type MapSource = { kind: 'stored'; maps: ConceptMapRow[] } | { kind: 'inline'; map: ConceptMap };

type ElementHit = MapElementRow & { mapUrl: string | null; mapVersion: string | null };

const SELECT = `SELECT e.group_index AS "groupIndex", e.source_system AS "sourceSystem", e.source_version AS "sourceVersion",
  e.source_code AS "sourceCode", e.source_display AS "sourceDisplay", e.target_system AS "targetSystem",
  e.target_version AS "targetVersion", e.target_code AS "targetCode", e.target_display AS "targetDisplay",
  e.equivalence, e.comment, e.depends_on AS "dependsOn", e.product, m.url AS "mapUrl", m.version AS "mapVersion"
  FROM terminology_concept_map_element e JOIN terminology_concept_map m ON m.id = e.concept_map_id`;

/** The mapping rows whose source (or target, when reversed) is the coding. */
async function elementsFor(db: Queryable, source: MapSource, coding: Coding, reverse: boolean): Promise<ElementHit[]> {
  if (source.kind === 'inline') {
    return flattenConceptMap(source.map)
      .filter((e) =>
        reverse
          ? e.targetCode === coding.code && (!coding.system || e.targetSystem === coding.system)
          : e.sourceCode === coding.code && (!coding.system || e.sourceSystem === coding.system),
      )
      .map((e) => ({ ...e, mapUrl: source.map.url ?? null, mapVersion: source.map.version ?? null }));
  }
  const params: unknown[] = [coding.code, coding.system ?? null];
  const [codeCol, systemCol] = reverse ? ['target_code', 'target_system'] : ['source_code', 'source_system'];
  let sql = `${SELECT} WHERE e.${codeCol} = $1 AND ($2::text IS NULL OR e.${systemCol} = $2)`;
  params.push(source.maps.map((m) => m.id));
  sql += ` AND m.id = ANY($3::bigint[])`;
  sql += ' ORDER BY m.id, e.group_index LIMIT 1000';
  return (await db.query<ElementHit>(sql, params)).rows;
}

function canonical(url: string | null, version: string | null): string | undefined {
  return url ? (version ? `${url}|${version}` : url) : undefined;
}

function dependenciesHold(hit: ElementHit, dependencies: TranslateRequest['dependencies']): boolean {
  if (!dependencies?.length || !hit.dependsOn?.length) {
    return true;
  }
  return (hit.dependsOn as { property?: string; system?: string; value?: string }[]).every((d) =>
    dependencies.some(
      (dep) =>
        (!dep.element || dep.element === d.property) &&
        dep.codings.some((c) => c.code === d.value && (!d.system || !c.system || c.system === d.system)),
    ),
  );
}

/**
 * Translates codings through concept maps (hl7.org/fhir/R4/conceptmap-operation-translate.html):
 * every matching element target is a match; a group with no element for the code applies its
 * `unmapped` rule (provided / fixed / other-map). `result` is true when some match is neither
 * unmatched nor disjoint.
 */
export async function translate(
  db: Queryable,
  source: MapSource,
  request: TranslateRequest,
  resolveMap: (url: string) => Promise<ConceptMapRow | undefined>,
  depth = 0,
): Promise<ConceptMapTranslateOutput> {
  const matches: TranslateMatch[] = [];
  for (const coding of request.codings) {
    const hits = (await elementsFor(db, source, coding, request.reverse === true)).filter(
      (h) =>
        (!request.targetSystem || (request.reverse ? h.sourceSystem : h.targetSystem) === request.targetSystem) &&
        dependenciesHold(h, request.dependencies),
    );
    for (const h of hits) {
      const [system, version, code, display] = request.reverse
        ? [h.sourceSystem, h.sourceVersion, h.sourceCode, h.sourceDisplay]
        : [h.targetSystem, h.targetVersion, h.targetCode, h.targetDisplay];
      const match: TranslateMatch = { equivalence: h.equivalence, source: canonical(h.mapUrl, h.mapVersion) };
      if (code) {
        match.concept = clean({ system, version, code, display });
      }
      if (h.product?.length) {
        match.product = (h.product as { property?: string; system?: string; value?: string; display?: string }[]).map(
          (p) => ({ element: p.property, concept: clean({ system: p.system, code: p.value, display: p.display }) }),
        );
      }
      matches.push(match);
    }
    if (!request.reverse) {
      matches.push(...(await unmapped(db, source, coding, hits, request, resolveMap, depth)));
    }
  }
  const result = matches.some((m) => m.equivalence !== 'unmatched' && m.equivalence !== 'disjoint');
  const label = request.codings.map((c) => `${c.system ? `${c.system}|` : ''}${c.code}`).join(', ');
  return {
    result,
    ...(result
      ? {}
      : { message: `No mapping found for ${label}${request.targetSystem ? ` to ${request.targetSystem}` : ''}` }),
    match: matches,
  };
}

async function unmapped(
  db: Queryable,
  source: MapSource,
  coding: Coding,
  hits: ElementHit[],
  request: TranslateRequest,
  resolveMap: (url: string) => Promise<ConceptMapRow | undefined>,
  depth: number,
): Promise<TranslateMatch[]> {
  const maps =
    source.kind === 'stored'
      ? source.maps.map((m) => ({ url: m.url, version: m.version, groups: m.groups }))
      : [{ url: source.map.url ?? null, version: source.map.version ?? null, groups: mapGroups(source.map) }];
  const out: TranslateMatch[] = [];
  for (const map of maps) {
    for (let index = 0; index < map.groups.length; index++) {
      const group = map.groups[index] as ConceptMapRow['groups'][number];
      const rule = group.unmapped;
      if (!rule?.mode || (coding.system && group.source && group.source !== coding.system)) {
        continue;
      }
      if (request.targetSystem && group.target && group.target !== request.targetSystem) {
        continue;
      }
      if (hits.some((h) => h.mapUrl === map.url && h.groupIndex === index)) {
        continue;
      }
      const from = canonical(map.url, map.version);
      if (rule.mode === 'provided') {
        out.push({ equivalence: 'inexact', concept: clean({ system: group.target, code: coding.code }), source: from });
      } else if (rule.mode === 'fixed' && rule.code) {
        out.push({
          equivalence: 'inexact',
          concept: clean({ system: group.target, code: rule.code, display: rule.display }),
          source: from,
        });
      } else if (rule.mode === 'other-map' && rule.url && depth < 5) {
        const other = await resolveMap(rule.url);
        if (other) {
          const nested = await translate(
            db,
            { kind: 'stored', maps: [other] },
            { ...request, codings: [coding] },
            resolveMap,
            depth + 1,
          );
          out.push(...nested.match);
        }
      }
    }
  }
  return out;
}

function clean(c: {
  system?: string | null;
  version?: string | null;
  code?: string | null;
  display?: string | null;
}): Coding {
  const coding: Coding = {};
  if (c.system) coding.system = c.system;
  if (c.version) coding.version = c.version;
  if (c.code) coding.code = c.code;
  if (c.display) coding.display = c.display;
  return coding;
}
