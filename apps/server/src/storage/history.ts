// History of a resource, a type or the whole system (hl7.org/fhir/R4/http.html#history), one page at
// a time, under the scope's projects and access rules.
import { assertStoredType, type StorageContext } from './context.js';
import { readCurrentRow } from './read.js';
import { parseStored } from './serialize.js';
import { selectHistory, type CurrentRow, type HistoryQuery, type RowCondition } from './sql/versions.js';

/** Versions newest first, one page; deleted versions come with an empty content. */
export async function readHistory(
  ctx: StorageContext,
  query: Omit<HistoryQuery, 'projects'>,
): Promise<{ rows: CurrentRow[]; hasMore: boolean }> {
  if (query.resourceType) {
    assertStoredType(query.resourceType);
  }
  const guard = ctx.scope.access;
  if (guard && query.resourceType) {
    guard.assertInteraction(query.resourceType, 'history');
  }
  const condition: RowCondition | undefined = guard
    ? (alias, param) => guard.readCondition(query.resourceType, 'history', alias, param)
    : undefined;
  let rows = await selectHistory(ctx.db, { ...query, projects: ctx.projects, condition });
  if (rows.length === 0 && query.resourceType && query.id) {
    // 404 for an id that never existed here (checked only when the page is empty).
    await readCurrentRow(ctx, query.resourceType, query.id, 'history');
  }
  if (guard) {
    rows = rows.map((r) =>
      r.deleted || !guard.hidesFields(r.resourceType)
        ? r
        : { ...r, content: JSON.stringify(guard.redact(parseStored(r.content))) },
    );
  }
  const hasMore = rows.length > query.count;
  return { rows: hasMore ? rows.slice(0, query.count) : rows, hasMore };
}
