import type { ConceptMap, ValueSet } from '@hearth/core';
import type { Queryable } from '../../platform/postgres.js';

export interface StoredInput<T> {
  projectId: string;
  resourceId: string;
  global: boolean;
  resource: T;
}

/** Writes value set rows (their compose, or their expansion when they only have one). */
export async function writeValueSets(db: Queryable, inputs: StoredInput<ValueSet>[]): Promise<void> {
  if (inputs.length === 0) {
    return;
  }
  const col = <T>(f: (i: StoredInput<ValueSet>) => T): T[] => inputs.map(f);
  await db.query(
    `INSERT INTO terminology_value_set (project_id, resource_id, global, url, version, date, name, title, status,
       compose, expansion)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bool[], $4::text[], $5::text[], $6::text[], $7::text[],
       $8::text[], $9::text[], $10::jsonb[], $11::jsonb[])
     ON CONFLICT (project_id, resource_id) DO UPDATE SET
       global = EXCLUDED.global, url = EXCLUDED.url, version = EXCLUDED.version, date = EXCLUDED.date,
       name = EXCLUDED.name, title = EXCLUDED.title, status = EXCLUDED.status, compose = EXCLUDED.compose,
       expansion = EXCLUDED.expansion`,
    [
      col((i) => i.projectId),
      col((i) => i.resourceId),
      col((i) => i.global),
      col((i) => i.resource.url ?? null),
      col((i) => i.resource.version ?? null),
      col((i) => i.resource.date ?? null),
      col((i) => i.resource.name ?? null),
      col((i) => i.resource.title ?? null),
      col((i) => i.resource.status ?? null),
      col((i) => (i.resource.compose ? JSON.stringify(i.resource.compose) : null)),
      col((i) => (!i.resource.compose && i.resource.expansion ? JSON.stringify(i.resource.expansion) : null)),
    ],
  );
}

/** One source → target mapping of a ConceptMap, as stored in terminology_concept_map_element. */
export interface MapElementRow {
  groupIndex: number;
  sourceSystem?: string;
  sourceVersion?: string;
  sourceCode: string;
  sourceDisplay?: string;
  targetSystem?: string;
  targetVersion?: string;
  targetCode?: string;
  targetDisplay?: string;
  equivalence: string;
  comment?: string;
  dependsOn?: unknown[];
  product?: unknown[];
}

/** Flattens group → element → target into rows; an element without targets is 'unmatched' (R4 conceptmap.html). */
export function flattenConceptMap(map: ConceptMap): MapElementRow[] {
  const rows: MapElementRow[] = [];
  (map.group ?? []).forEach((group, groupIndex) => {
    for (const element of group.element ?? []) {
      if (typeof element.code !== 'string') {
        continue;
      }
      const base = {
        groupIndex,
        sourceSystem: group.source,
        sourceVersion: group.sourceVersion,
        sourceCode: element.code,
        sourceDisplay: element.display,
        targetSystem: group.target,
        targetVersion: group.targetVersion,
      };
      const targets = element.target ?? [];
      if (targets.length === 0) {
        rows.push({ ...base, equivalence: 'unmatched' });
      }
      for (const t of targets) {
        rows.push({
          ...base,
          targetCode: t.code,
          targetDisplay: t.display,
          equivalence: t.equivalence ?? 'equivalent',
          comment: t.comment,
          dependsOn: t.dependsOn?.length ? t.dependsOn : undefined,
          product: t.product?.length ? t.product : undefined,
        });
      }
    }
  });
  return rows;
}

/** The part of each group that $translate needs when no element matches (group.unmapped). */
export function mapGroups(map: ConceptMap): { source?: string; target?: string; unmapped?: unknown }[] {
  return (map.group ?? []).map((g) => ({ source: g.source, target: g.target, unmapped: g.unmapped }));
}

export async function writeConceptMaps(db: Queryable, inputs: StoredInput<ConceptMap>[]): Promise<void> {
  if (inputs.length === 0) {
    return;
  }
  const col = <T>(f: (i: StoredInput<ConceptMap>) => T): T[] => inputs.map(f);
  const upserted = await db.query<{ id: number; project_id: string; resource_id: string }>(
    `INSERT INTO terminology_concept_map (project_id, resource_id, global, url, version, date, name, status,
       source_uri, target_uri, groups)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bool[], $4::text[], $5::text[], $6::text[], $7::text[],
       $8::text[], $9::text[], $10::text[], $11::jsonb[])
     ON CONFLICT (project_id, resource_id) DO UPDATE SET
       global = EXCLUDED.global, url = EXCLUDED.url, version = EXCLUDED.version, date = EXCLUDED.date,
       name = EXCLUDED.name, status = EXCLUDED.status, source_uri = EXCLUDED.source_uri,
       target_uri = EXCLUDED.target_uri, groups = EXCLUDED.groups
     RETURNING id, project_id, resource_id`,
    [
      col((i) => i.projectId),
      col((i) => i.resourceId),
      col((i) => i.global),
      col((i) => i.resource.url ?? null),
      col((i) => i.resource.version ?? null),
      col((i) => i.resource.date ?? null),
      col((i) => i.resource.name ?? null),
      col((i) => i.resource.status ?? null),
      col((i) => i.resource.sourceUri ?? i.resource.sourceCanonical ?? null),
      col((i) => i.resource.targetUri ?? i.resource.targetCanonical ?? null),
      col((i) => JSON.stringify(mapGroups(i.resource))),
    ],
  );
  const byKey = new Map(inputs.map((i) => [`${i.projectId}/${i.resourceId}`, i.resource]));
  const ids = upserted.rows.map((r) => Number(r.id));
  await db.query('DELETE FROM terminology_concept_map_element WHERE concept_map_id = ANY($1::bigint[])', [ids]);
  const rows: (MapElementRow & { mapId: number })[] = [];
  for (const r of upserted.rows) {
    const map = byKey.get(`${r.project_id}/${r.resource_id}`);
    if (map) {
      rows.push(...flattenConceptMap(map).map((e) => ({ ...e, mapId: Number(r.id) })));
    }
  }
  const CHUNK = 5000;
  for (let start = 0; start < rows.length; start += CHUNK) {
    const chunk = rows.slice(start, start + CHUNK);
    const c = <T>(f: (r: MapElementRow & { mapId: number }) => T): T[] => chunk.map(f);
    await db.query(
      `INSERT INTO terminology_concept_map_element (concept_map_id, group_index, source_system, source_version,
         source_code, source_display, target_system, target_version, target_code, target_display, equivalence,
         comment, depends_on, product)
       SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::jsonb[], $14::jsonb[])`,
      [
        c((r) => r.mapId),
        c((r) => r.groupIndex),
        c((r) => r.sourceSystem ?? null),
        c((r) => r.sourceVersion ?? null),
        c((r) => r.sourceCode),
        c((r) => r.sourceDisplay ?? null),
        c((r) => r.targetSystem ?? null),
        c((r) => r.targetVersion ?? null),
        c((r) => r.targetCode ?? null),
        c((r) => r.targetDisplay ?? null),
        c((r) => r.equivalence),
        c((r) => r.comment ?? null),
        c((r) => (r.dependsOn ? JSON.stringify(r.dependsOn) : null)),
        c((r) => (r.product ? JSON.stringify(r.product) : null)),
      ],
    );
  }
}
