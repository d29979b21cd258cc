import type { Resource } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import { kindOf } from '../kinds/registry.js';
import type { ParamDef } from '../registry/params.js';
import type { ExtractContext, IndexContext } from './context.js';
import { emptyRowSet, KINDS, markExtremes, stampTokenSortDates, type RowSet } from './rows.js';

/**
 * Every index row of one resource: each parameter's expression is evaluated (compiled once) and
 * its values turned into rows by the parameter's kind (kinds/registry.ts).
 */
export function extractRows(resource: Resource, params: Iterable<ParamDef>, ctx: ExtractContext): RowSet {
  const rows = emptyRowSet();
  const root: TypedValue[] = [{ value: resource, type: resource.resourceType }];
  const res = resource as Record<string, unknown>;
  const indexCtx: IndexContext = { ...ctx, evaluated: res, extractRows };
  for (const p of params) {
    if (!p.evaluate || p.column) continue;
    let values: TypedValue[];
    try {
      values = p.evaluate(root, res);
    } catch {
      continue; // A value the expression cannot read is not indexed; the write still succeeds.
    }
    if (values.length === 0) continue;
    kindOf(p.type)?.index(values, { param: p, code: p.code, grp: 0 }, rows, indexCtx);
  }
  for (const kind of KINDS) {
    markExtremes(rows[kind]);
  }
  stampTokenSortDates(rows);
  indexContained(resource, rows, ctx);
  return rows;
}

/** Indexes the contained resources that the resource's references point at. */
function indexContained(resource: Resource, rows: RowSet, ctx: ExtractContext): void {
  const contained = resource.contained as Resource[] | undefined;
  if (!Array.isArray(contained) || contained.length === 0 || !ctx.paramsOf) return;
  const referenced = new Set(
    rows.reference.filter((r) => r.values[2]?.startsWith('#')).map((r) => (r.values[2] as string).slice(1)),
  );
  for (const c of contained) {
    if (!c || typeof c.id !== 'string' || !referenced.has(c.id) || typeof c.resourceType !== 'string') continue;
    // References inside a contained resource resolve against the container ('#other').
    const inner = extractRows(c, ctx.paramsOf(c.resourceType), {
      ...ctx,
      resource: { ...c, id: resource.id, contained },
    });
    (rows.contained ??= []).push({ resourceType: c.resourceType, id: c.id, rows: inner });
  }
}
