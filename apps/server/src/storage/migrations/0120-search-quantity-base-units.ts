import { ucumBaseConversion } from '../../platform/ucum.js';
import type { Migration } from './types.js';

const UCUM_SYSTEM = 'http://unitsofmeasure.org';

/**
 * Quantity rows compare in UCUM base units (search/values/ucum.ts: 2 [lb_av] as 907.18474 g,
 * 90 min as 5400 s, 37 Cel as 310.15 K) instead of the unit with its metric prefix folded
 * ('g', 'g/L'). Existing rows get their compared unit and values again, from the unit and the
 * values they were written with, one UPDATE per distinct UCUM unit, in exact numerics (the
 * same arithmetic as indexing: value × factor + offset). Units without base units ([IU]) keep
 * the prefix-folded form, as new rows do; open Range bounds (±1e300) stay as they are.
 */
export const m0120SearchQuantityBaseUnits: Migration = {
  id: 120,
  name: 'search: quantities compared in UCUM base units',
  async up(client) {
    const { rows } = await client.query<{ unit: string }>(
      `SELECT DISTINCT unit FROM search_quantity WHERE unit IS NOT NULL AND (system IS NULL OR system = $1)`,
      [UCUM_SYSTEM],
    );
    for (const { unit } of rows) {
      const conversion = ucumBaseConversion(unit);
      if (!conversion) {
        continue;
      }
      await client.query(
        `UPDATE search_quantity SET nunit = $2,
           nlow = CASE WHEN low IN (-1e300, 1e300) THEN low ELSE low * $3::numeric + $4::numeric END,
           nhigh = CASE WHEN high IN (-1e300, 1e300) THEN high ELSE high * $3::numeric + $4::numeric END
         WHERE unit = $1 AND (system IS NULL OR system = $5)`,
        [unit, conversion.unit, conversion.factor, conversion.offset, UCUM_SYSTEM],
      );
    }
  },
};
