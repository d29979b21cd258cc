import type { Migration } from './types.js';

/** At most this many duplicates are spelled out in the refusal; the rest are counted. */
const LISTED = 50;

interface Duplicate {
  resource_type: string;
  id: string;
  projects: string[];
}

/**
 * `[base]/Patient/123` names one resource on the whole server, as on every FHIR server: the
 * current table's key becomes (resource_type, id), so the unique index itself refuses a second
 * project's copy of an id, also under concurrency, with no extra read on any write. Deleted
 * resources keep their row (deleted = true), so their id stays taken. History needs no index of
 * its own: each history row has its current row, which holds the id for one project.
 *
 * A database that already holds an id in several projects is refused, whole: Hearth cannot tell
 * which copy the id should name, so it lists them and how to resolve them, and drops nothing.
 */
export const m0002UniqueIds: Migration = {
  id: 2,
  name: 'storage: a resource id is unique per type across all projects',
  async up(client) {
    const duplicates = await client.query<Duplicate>(`
      SELECT resource_type, id, array_agg(project_id::text ORDER BY project_id) AS projects
      FROM resource GROUP BY resource_type, id HAVING count(*) > 1
      ORDER BY resource_type, id`);
    if (duplicates.rows.length > 0) {
      throw new Error(duplicateIdsRefusal(duplicates.rows));
    }
    // The old key (project first) goes; a plain index on it keeps per-project walks (reindex) fast.
    await client.query('ALTER TABLE resource DROP CONSTRAINT resource_pkey');
    await client.query('ALTER TABLE resource ADD CONSTRAINT resource_pkey PRIMARY KEY (resource_type, id)');
    await client.query('CREATE INDEX resource_project_id_idx ON resource (resource_type, project_id, id)');
    // Same columns as the new key, which now serves every lookup by id.
    await client.query('DROP INDEX resource_id_idx');
  },
};

/** The error text: what is duplicated, why the upgrade stops, and how to resolve it. */
function duplicateIdsRefusal(duplicates: Duplicate[]): string {
  const listed = duplicates
    .slice(0, LISTED)
    .map((d) => `  ${d.resource_type}/${d.id} in projects ${d.projects.join(', ')}`);
  if (duplicates.length > LISTED) {
    listed.push(`  ... and ${duplicates.length - LISTED} more`);
  }
  return [
    `Cannot upgrade: ${duplicates.length} resource id(s) exist in more than one project, and an id must name one resource of its type on the whole server:`,
    ...listed,
    'Nothing was changed, and Hearth drops nothing itself: it cannot tell which copy the id should name.',
    'With the previous Hearth version running (this one does not start until this is resolved), for each id above (T/I):',
    '  1. Choose the project that keeps the id.',
    '  2. In every other project P, as a member of P: read the copy (GET [base]/T/I), create it again without its id',
    "     (POST [base]/T gives it a new id), point P's references to T/I at the new id, then DELETE [base]/T/I",
    '     (this removes its search index and terminology rows).',
    '  3. Remove what the delete keeps of that copy (PostgreSQL, one transaction):',
    `       DELETE FROM "T" WHERE resource_type = 'T' AND id = 'I' AND project_id = 'P' AND deleted;`,
    `       DELETE FROM "T_History" WHERE resource_type = 'T' AND id = 'I' AND project_id = 'P';`,
    'Then start this version again: the upgrade resumes where it stopped. To list the ids again:',
    '  SELECT resource_type, id, array_agg(project_id) FROM resource GROUP BY resource_type, id HAVING count(*) > 1;',
  ].join('\n');
}
