import type { CodeSystem } from '@hearth/core';
import type { Queryable } from '../../platform/postgres.js';
import { flattenConcepts, type ConceptRow } from '../concepts.js';
import { ancestorSets, insertClosure } from './closure.js';

/** Rows per multi-row statement: large enough to amortise round trips, small enough for memory. */
const CHUNK = 5000;

export interface CodeSystemInput {
  projectId: string;
  resourceId: string;
  global: boolean;
  resource: CodeSystem;
}

/**
 * Writes code systems and their concepts (parent links, closure) in a few multi-row statements,
 * whatever the number of code systems. A code system whose concepts came from $import keeps them
 * when its resource is written again without a concept list.
 */
export async function writeCodeSystems(db: Queryable, inputs: CodeSystemInput[]): Promise<void> {
  if (inputs.length === 0) {
    return;
  }
  const col = <T>(f: (i: CodeSystemInput) => T): T[] => inputs.map(f);
  const upserted = await db.query<{ id: number; project_id: string; resource_id: string; concepts_source: string }>(
    `INSERT INTO terminology_code_system AS t (project_id, resource_id, global, url, version, date, name, title,
       status, content, case_sensitive, hierarchy_meaning, property_defs)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bool[], $4::text[], $5::text[], $6::text[], $7::text[],
       $8::text[], $9::text[], $10::text[], $11::bool[], $12::text[], $13::jsonb[])
     ON CONFLICT (project_id, resource_id) DO UPDATE SET
       global = EXCLUDED.global, url = EXCLUDED.url, version = EXCLUDED.version, date = EXCLUDED.date,
       name = EXCLUDED.name, title = EXCLUDED.title, status = EXCLUDED.status, content = EXCLUDED.content,
       case_sensitive = EXCLUDED.case_sensitive, hierarchy_meaning = EXCLUDED.hierarchy_meaning,
       property_defs = EXCLUDED.property_defs
     RETURNING id, project_id, resource_id, concepts_source`,
    [
      col((i) => i.projectId),
      col((i) => i.resourceId),
      col((i) => i.global),
      col((i) => i.resource.url ?? `urn:hearth:codesystem:${i.resourceId}`),
      col((i) => i.resource.version ?? null),
      col((i) => i.resource.date ?? null),
      col((i) => i.resource.name ?? null),
      col((i) => i.resource.title ?? null),
      col((i) => i.resource.status ?? null),
      col((i) => i.resource.content ?? null),
      col((i) => i.resource.caseSensitive !== false),
      col((i) => i.resource.hierarchyMeaning ?? null),
      col((i) => JSON.stringify(i.resource.property ?? [])),
    ],
  );
  const byKey = new Map(inputs.map((i) => [`${i.projectId}/${i.resourceId}`, i]));
  const replace: { id: number; concepts: ConceptRow[] }[] = [];
  for (const row of upserted.rows) {
    const input = byKey.get(`${row.project_id}/${row.resource_id}`);
    if (!input) {
      continue;
    }
    const hasConcepts = (input.resource.concept?.length ?? 0) > 0;
    if (hasConcepts || row.concepts_source !== 'import') {
      replace.push({ id: Number(row.id), concepts: flattenConcepts(input.resource) });
    }
  }
  if (replace.length === 0) {
    return;
  }
  const ids = replace.map((r) => r.id);
  // Cascade-free deletes: closure and links first, then the concepts themselves.
  await db.query('DELETE FROM terminology_concept_closure WHERE code_system_id = ANY($1::bigint[])', [ids]);
  await db.query('DELETE FROM terminology_concept_parent WHERE code_system_id = ANY($1::bigint[])', [ids]);
  await db.query('DELETE FROM terminology_concept WHERE code_system_id = ANY($1::bigint[])', [ids]);
  const items = replace.flatMap((r) => r.concepts.map((row) => ({ csId: r.id, row })));
  await insertConcepts(db, items, false);
  await insertParentLinks(
    db,
    items.flatMap(({ csId, row }) => row.parents.map((parent) => ({ csId, child: row.code, parent }))),
  );
  const closure: { csId: number; ancestor: string; descendant: string }[] = [];
  for (const r of replace) {
    if (r.concepts.some((c) => c.parents.length > 0)) {
      const sets = ancestorSets(new Map(r.concepts.map((c) => [c.code, c.parents])));
      for (const [descendant, ancestors] of sets) {
        for (const ancestor of ancestors) closure.push({ csId: r.id, ancestor, descendant });
      }
    }
  }
  await insertClosure(db, closure);
  await db.query(
    `UPDATE terminology_code_system t SET concepts_source = 'resource', concept_count = n.count
     FROM unnest($1::bigint[], $2::int[]) AS n(id, count) WHERE t.id = n.id`,
    [ids, replace.map((r) => r.concepts.length)],
  );
}

/**
 * Inserts concepts in chunks. With `merge`, an existing code is updated instead: a missing display
 * or definition keeps the stored one and property values are merged by property code ($import runs
 * in several passes, e.g. descriptions then relationships).
 */
export async function insertConcepts(
  db: Queryable,
  items: { csId: number; row: ConceptRow }[],
  merge: boolean,
): Promise<number> {
  let count = 0;
  for (let start = 0; start < items.length; start += CHUNK) {
    const chunk = items.slice(start, start + CHUNK);
    const c = <T>(f: (r: ConceptRow) => T): T[] => chunk.map((i) => f(i.row));
    const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
    const result = await db.query(
      `INSERT INTO terminology_concept AS t (code_system_id, code, display, definition, abstract, inactive,
         designations, properties, property_values)
       SELECT cs, code, display, definition, abstract, inactive, designations, properties, property_values
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::bool[], $7::jsonb[],
         $8::jsonb[], $9::jsonb[]) WITH ORDINALITY
         AS v(cs, code, display, definition, abstract, inactive, designations, properties, property_values, ord)
       ORDER BY ord
       ${
         merge
           ? `ON CONFLICT (code_system_id, code) DO UPDATE SET
                display = COALESCE(EXCLUDED.display, t.display),
                definition = COALESCE(EXCLUDED.definition, t.definition),
                abstract = t.abstract OR EXCLUDED.abstract,
                inactive = t.inactive OR EXCLUDED.inactive,
                designations = COALESCE(EXCLUDED.designations, t.designations),
                properties = COALESCE(EXCLUDED.properties, t.properties),
                property_values = t.property_values || EXCLUDED.property_values`
           : ''
       }`,
      [
        chunk.map((i) => i.csId),
        c((r) => r.code),
        c((r) => r.display ?? null),
        c((r) => r.definition ?? null),
        c((r) => r.abstract),
        c((r) => r.inactive),
        c((r) => json(r.designations)),
        c((r) => json(r.properties)),
        c((r) => JSON.stringify(r.propertyValues)),
      ],
    );
    count += result.rowCount ?? 0;
  }
  return count;
}

/** Inserts direct parent links; links already there are kept. Returns how many were new. */
export async function insertParentLinks(
  db: Queryable,
  links: { csId: number; child: string; parent: string }[],
): Promise<number> {
  let count = 0;
  for (let start = 0; start < links.length; start += CHUNK * 2) {
    const chunk = links.slice(start, start + CHUNK * 2);
    const result = await db.query(
      `INSERT INTO terminology_concept_parent (code_system_id, child, parent)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])
       ON CONFLICT DO NOTHING`,
      [chunk.map((l) => l.csId), chunk.map((l) => l.child), chunk.map((l) => l.parent)],
    );
    count += result.rowCount ?? 0;
  }
  return count;
}

export async function deleteTerminologyRows(
  db: Queryable,
  table: 'terminology_code_system' | 'terminology_value_set' | 'terminology_concept_map',
  keys: { projectId: string; resourceId: string }[],
): Promise<void> {
  if (keys.length === 0) {
    return;
  }
  await db.query(
    `DELETE FROM ${table} t USING unnest($1::uuid[], $2::text[]) AS k(project_id, resource_id)
     WHERE t.project_id = k.project_id AND t.resource_id = k.resource_id`,
    [keys.map((k) => k.projectId), keys.map((k) => k.resourceId)],
  );
}
