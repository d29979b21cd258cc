import { badRequest, fail, splitSearchValue, type Filter, type SearchParamType } from '@hearth/core';
import { TABLES, type Kind } from '../index/rows.js';
import type { ParamDef } from '../registry/params.js';
import { dateQuery } from '../params/date-query.js';
import type { KindQuery } from '../params/match.js';
import { numberQuery, quantityQuery } from '../params/number-query.js';
import { referenceQuery } from '../params/reference-query.js';
import { stringQuery } from '../params/string-query.js';
import { tokenQuery } from '../params/token-query.js';
import { uriQuery } from '../params/uri-query.js';
import { valueItems, type QueryContext } from './context.js';
import { rowId, type RowRef } from './row.js';

const PART_QUERIES: Partial<Record<SearchParamType, KindQuery>> = {
  token: tokenQuery,
  string: stringQuery,
  date: dateQuery,
  number: numberQuery,
  quantity: quantityQuery,
  uri: uriQuery,
  reference: referenceQuery(),
};

/**
 * Composite search (hl7.org/fhir/R4/search.html#composite): `code-value-quantity=loinc|1234$gt5`
 * needs one element whose parts match each value part: rows `code#0`, `code#1` of the same grp.
 */
export function compositeCondition(ctx: QueryContext, row: RowRef, param: ParamDef, filter: Filter): string {
  const components = param.components ?? [];
  const alternatives = splitSearchValue(filter.value, ',', false).map((alt) => {
    const parts = splitSearchValue(alt, '$', false);
    if (parts.length !== components.length) {
      fail(badRequest(`${filter.code} needs ${components.length} parts separated by $`, filter.code));
    }
    let sql = '';
    let previous: string | undefined;
    const aliases: string[] = [];
    const clauses: string[] = [];
    components.forEach((component, j) => {
      const query = PART_QUERIES[component.type];
      const kind = component.type as Kind;
      if (!query || !TABLES[kind]) {
        fail(badRequest(`${filter.code}: parts of type ${component.type} are not supported`, filter.code));
      }
      const x = ctx.alias('c');
      aliases.push(x);
      const partFilter: Filter = { code: filter.code, operator: filter.operator, value: parts[j] };
      const match = query(ctx, x, valueItems(partFilter, component.type), partFilter, param);
      const join = previous
        ? `${x}.resource_id = ${previous}.resource_id AND ${x}.project_id = ${previous}.project_id AND ${x}.resource_type = ${previous}.resource_type AND ${x}.grp = ${previous}.grp`
        : `${x}.resource_id = ${rowId(row)} AND ${x}.project_id = ${row.alias}.project_id AND ${x}.resource_type = ${row.resourceType ? ctx.bind(row.resourceType) : `${row.alias}.resource_type`}`;
      clauses.push(
        `FROM ${TABLES[match.kind].table} ${x} WHERE ${join} AND ${x}.code = ${ctx.bind(`${param.code}#${j}`)} AND (${match.predicate})`,
      );
      previous = x;
    });
    // Nest: EXISTS (part 0 AND EXISTS (part 1 AND ...)).
    for (let j = clauses.length - 1; j >= 0; j--) {
      sql = `EXISTS (SELECT 1 ${clauses[j]}${sql ? ` AND ${sql}` : ''})`;
    }
    return sql;
  });
  return alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`;
}

/**
 * `near=latitude|longitude|distance|units` (hl7.org/fhir/R4/location.html#positional): a
 * bounding box on the indexed latitude and longitude, then the great-circle distance.
 */
/** The longitudes within dLon degrees of lon, across the antimeridian too (179.9 is near -179.9). */
function longitudeBox(ctx: QueryContext, column: string, lon: number, dLon: number): string {
  if (dLon >= 180) return 'true';
  const [low, high] = [lon - dLon, lon + dLon];
  const between = (a: number, b: number) => `${column} BETWEEN ${ctx.bind(a, 'numeric')} AND ${ctx.bind(b, 'numeric')}`;
  if (low < -180) return `(${between(low + 360, 180)} OR ${between(-180, high)})`;
  if (high > 180) return `(${between(low, 180)} OR ${between(-180, high - 360)})`;
  return between(low, high);
}

export function nearCondition(ctx: QueryContext, row: RowRef, param: ParamDef, filter: Filter): string {
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
