import { badRequest, fail, splitSearchValue, type Filter } from '@hearth/core';
import type { TypedValue } from '../extract/evaluate.js';
import type { RowSet } from '../index/rows.js';
import type { QueryContext } from '../query/context.js';
import { rowId, type RowRef } from '../query/row.js';
import type { ParamDef } from '../registry/params.js';
import { decimalText } from '../values/decimals.js';
import type { SearchParamKind } from './kind.js';
import { pushNumber } from './number.js';

/** A Location's position as two number rows (`near#0` latitude, `near#1` longitude) of one group. */
function indexNear(values: TypedValue[], code: string, rows: RowSet): void {
  let grp = 0;
  for (const { value } of values) {
    const v = value as { latitude?: unknown; longitude?: unknown } | null;
    const lat = decimalText(v?.latitude);
    const lon = decimalText(v?.longitude);
    if (lat === undefined || lon === undefined) continue;
    grp++;
    pushNumber(rows, `${code}#0`, grp, lat, lat);
    pushNumber(rows, `${code}#1`, grp, lon, lon);
  }
}

/** The longitudes within dLon degrees of lon, across the antimeridian too (179.9 is near -179.9). */
function longitudeBox(ctx: QueryContext, column: string, lon: number, dLon: number): string {
  if (dLon >= 180) return 'true';
  const [low, high] = [lon - dLon, lon + dLon];
  const between = (a: number, b: number) => `${column} BETWEEN ${ctx.bind(a, 'numeric')} AND ${ctx.bind(b, 'numeric')}`;
  if (low < -180) return `(${between(low + 360, 180)} OR ${between(-180, high)})`;
  if (high > 180) return `(${between(low, 180)} OR ${between(-180, high - 360)})`;
  return between(low, high);
}

/**
 * `near=latitude|longitude|distance|units` (hl7.org/fhir/R4/location.html#positional): a
 * bounding box on the indexed latitude and longitude, then the great-circle distance.
 */
function nearCondition(ctx: QueryContext, row: RowRef, param: ParamDef, filter: Filter): string {
  const [latText, lonText, distText, unitText] = splitSearchValue(filter.value, '|');
  const lat = Number(latText);
  const lon = Number(lonText);
  let dist = distText ? Number(distText) : 5;
  if (
    !Number.isFinite(lat) ||
    !Number.isFinite(lon) ||
    !Number.isFinite(dist) ||
    dist < 0 ||
    Math.abs(lat) > 90 ||
    Math.abs(lon) > 180
  ) {
    fail(badRequest(`near must be latitude|longitude|distance|units, not "${filter.value}"`, filter.code));
  }
  const unit = unitText || 'km';
  const toKm: Record<string, number> = { km: 1, m: 0.001, '[mi_i]': 1.609344, mi: 1.609344 };
  if (toKm[unit] === undefined) {
    fail(badRequest(`near: unsupported distance unit "${unit}" (km, m, [mi_i])`, filter.code));
  }
  dist *= toKm[unit];
  const dLat = dist / 111.2;
  const dLon = dist / (111.2 * Math.max(0.01, Math.cos((lat * Math.PI) / 180)));
  const a = ctx.alias('g');
  const b = ctx.alias('g');
  const rt = row.resourceType ? ctx.bind(row.resourceType) : `${row.alias}.resource_type`;
  const latP = ctx.bind(lat, 'float8');
  const lonP = ctx.bind(lon, 'float8');
  const haversine = `2 * 6371 * asin(sqrt(power(sin(radians(${a}.low::float8 - ${latP}) / 2), 2) + cos(radians(${latP})) * cos(radians(${a}.low::float8)) * power(sin(radians(${b}.low::float8 - ${lonP}) / 2), 2)))`;
  return `EXISTS (SELECT 1 FROM search_number ${a} JOIN search_number ${b} ON ${b}.resource_id = ${a}.resource_id AND ${b}.project_id = ${a}.project_id AND ${b}.resource_type = ${a}.resource_type AND ${b}.grp = ${a}.grp AND ${b}.code = ${ctx.bind(`${param.code}#1`)}
    WHERE ${a}.resource_id = ${rowId(row)} AND ${a}.project_id = ${row.alias}.project_id AND ${a}.resource_type = ${rt} AND ${a}.code = ${ctx.bind(`${param.code}#0`)}
      AND ${a}.low BETWEEN ${ctx.bind(lat - dLat, 'numeric')} AND ${ctx.bind(lat + dLat, 'numeric')}
      AND ${longitudeBox(ctx, `${b}.low`, lon, dLon)}
      AND ${haversine} <= ${ctx.bind(dist, 'float8')})`;
}

/**
 * Special parameters (hl7.org/fhir/R4/search.html#special): only Location's `near` is
 * supported, indexed as number rows; the others (`_text`, `_content`, `_query`...) are
 * unsupported parameters (ignored under lenient handling).
 */
export const specialKind: SearchParamKind = {
  type: 'special',
  prefixed: false,
  index: (values, { param }, rows) => {
    if (param.code === 'near') indexNear(values, param.code, rows);
  },
  condition: (ctx, row, param, filter) => {
    if (param.code === 'near') return nearCondition(ctx, row, param, filter);
    ctx.unsupported(`Search parameter "${filter.code}" is not supported`, filter.code);
    return undefined;
  },
  // :missing asks about the latitude rows.
  missing: (param) => ({ kind: 'number', code: `${param.code}#0` }),
};
