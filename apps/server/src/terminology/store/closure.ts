import type { Queryable } from '../../platform/postgres.js';

/**
 * The ancestors of every code from its direct parents, computed in memory (a code system written
 * as a resource is in memory anyway; this beats a recursive query). A breadth-first walk per code
 * that reuses the finished sets of codes met on the way; cycles in bad data simply end a walk.
 */
export function ancestorSets(parents: Map<string, string[]>): Map<string, Set<string>> {
  const done = new Map<string, Set<string>>();
  for (const code of parents.keys()) {
    const found = new Set<string>();
    const queue = [...(parents.get(code) ?? [])];
    while (queue.length > 0) {
      const next = queue.pop() as string;
      if (found.has(next)) {
        continue;
      }
      found.add(next);
      const known = done.get(next);
      if (known) {
        for (const a of known) found.add(a);
      } else {
        queue.push(...(parents.get(next) ?? []));
      }
    }
    found.delete(code);
    done.set(code, found);
  }
  return done;
}

/** Inserts closure rows computed in memory, in chunks. */
export async function insertClosure(
  db: Queryable,
  rows: { csId: number; ancestor: string; descendant: string }[],
): Promise<void> {
  const CHUNK = 20_000;
  for (let start = 0; start < rows.length; start += CHUNK) {
    const chunk = rows.slice(start, start + CHUNK);
    await db.query(
      `INSERT INTO terminology_concept_closure (code_system_id, ancestor, descendant)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
      [chunk.map((r) => r.csId), chunk.map((r) => r.ancestor), chunk.map((r) => r.descendant)],
    );
  }
}

/**
 * Rebuilds the transitive closure of the parent links of whole code systems. UNION (not UNION ALL)
 * drops pairs already found, so a cycle in bad data ends the recursion instead of looping.
 */
export async function rebuildClosure(db: Queryable, codeSystemIds: number[]): Promise<number> {
  if (codeSystemIds.length === 0) {
    return 0;
  }
  await db.query('DELETE FROM terminology_concept_closure WHERE code_system_id = ANY($1::bigint[])', [codeSystemIds]);
  const result = await db.query(
    `INSERT INTO terminology_concept_closure (code_system_id, ancestor, descendant)
     WITH RECURSIVE c(cs, ancestor, descendant) AS (
       SELECT code_system_id, parent, child FROM terminology_concept_parent WHERE code_system_id = ANY($1::bigint[])
       UNION
       SELECT c.cs, p.parent, c.descendant
       FROM c JOIN terminology_concept_parent p ON p.code_system_id = c.cs AND p.child = c.ancestor
     )
     SELECT cs, ancestor, descendant FROM c WHERE ancestor <> descendant`,
    [codeSystemIds],
  );
  return result.rowCount ?? 0;
}

/**
 * Adds the closure pairs created by new parent links (already inserted in terminology_concept_parent):
 * every (a, d) with a path a → … → parent → child → … → d. Seeded with the new links and grown up
 * and down the full link table, so the links of one batch may arrive in any order.
 */
export async function extendClosure(
  db: Queryable,
  codeSystemId: number,
  links: { child: string; parent: string }[],
): Promise<number> {
  if (links.length === 0) {
    return 0;
  }
  const result = await db.query(
    `INSERT INTO terminology_concept_closure (code_system_id, ancestor, descendant)
     WITH RECURSIVE c(ancestor, descendant) AS (
       SELECT parent, child FROM unnest($2::text[], $3::text[]) AS l(child, parent)
       UNION
       SELECT x.ancestor, x.descendant FROM c CROSS JOIN LATERAL (
         SELECT p.parent AS ancestor, c.descendant FROM terminology_concept_parent p
         WHERE p.code_system_id = $1 AND p.child = c.ancestor
         UNION ALL
         SELECT c.ancestor, p.child FROM terminology_concept_parent p
         WHERE p.code_system_id = $1 AND p.parent = c.descendant
       ) x
     )
     SELECT $1, ancestor, descendant FROM c WHERE ancestor <> descendant
     ON CONFLICT DO NOTHING`,
    [codeSystemId, links.map((l) => l.child), links.map((l) => l.parent)],
  );
  return result.rowCount ?? 0;
}
