import type { Resource } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { ParamDef } from '../registry/params.js';
import { indexDate } from '../params/date-index.js';
import { indexNear, indexNumber } from '../params/number-index.js';
import { indexQuantity } from '../params/quantity-index.js';
import { indexReference } from '../params/reference-index.js';
import { indexString } from '../params/string-index.js';
import { indexToken } from '../params/token-index.js';
import { indexUri } from '../params/uri-index.js';
import { emptyRowSet, KINDS, markExtremes, stampTokenSortDates, type ExtractContext, type RowSet } from './rows.js';
import type { SearchParamType } from '@hearth/core';

function indexValues(
  type: SearchParamType,
  values: TypedValue[],
  code: string,
  grp: number,
  rows: RowSet,
  ctx: ExtractContext,
): void {
  switch (type) {
    case 'token':
      return indexToken(values, code, grp, rows, grp === 0);
    case 'string':
      return indexString(values, code, grp, rows);
    case 'date':
      return indexDate(values, code, grp, rows);
    case 'number':
      return indexNumber(values, code, grp, rows);
    case 'quantity':
      return indexQuantity(values, code, grp, rows);
    case 'reference':
      return indexReference(values, code, grp, rows, ctx);
    case 'uri':
      return indexUri(values, code, grp, rows);
    default:
      return;
  }
}

/**
 * Every index row of one resource: each parameter's expression is evaluated (compiled once) and
 * its values turned into rows of the parameter's kind. A composite's parts are indexed per
 * element of its base expression, numbered by `grp` so that a search can require both parts
 * to come from the same element (hl7.org/fhir/R4/search.html#composite).
 */
export function extractRows(resource: Resource, params: Iterable<ParamDef>, ctx: ExtractContext): RowSet {
  const rows = emptyRowSet();
  const root: TypedValue[] = [{ value: resource, type: resource.resourceType }];
  const res = resource as Record<string, unknown>;
  for (const p of params) {
    if (!p.evaluate || p.column) continue;
    let values: TypedValue[];
    try {
      values = p.evaluate(root, res);
    } catch {
      continue; // A value the expression cannot read is not indexed; the write still succeeds.
    }
    if (values.length === 0) continue;
    if (p.type === 'composite') {
      const components = p.components ?? [];
      values.forEach((element, i) => {
        // An element is indexed only when it has a value for every part.
        const parts = components.map((c) => (c.evaluate ? c.evaluate([element], res) : []));
        if (parts.some((values) => values.length === 0)) return;
        components.forEach((component, j) => {
          indexValues(component.type, parts[j], `${p.code}#${j}`, i + 1, rows, ctx);
        });
      });
    } else if (p.type === 'special') {
      if (p.code === 'near') indexNear(values, p.code, rows);
    } else {
      indexValues(p.type, values, p.code, 0, rows, ctx);
    }
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
