import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Operator, type Resource } from '@hearth/core';
import { readR4File } from '@hearth/definitions';
import { createTestDatabase, type TestDatabase } from '../../test/db.js';
import { extractRows } from '../index/extract.js';
import { emptyRowSet, TABLES } from '../index/rows.js';
import { writeIndexRows } from '../index/writer.js';
import { QueryContext, valueItems } from '../query/context.js';
import { SearchParamRegistry } from '../registry/project-params.js';
import { toParamDef, type ParamDef, type SearchParameterResource } from '../registry/params.js';
import { kindOf } from './registry.js';

/**
 * Each kind both ways, on its own: its `index` turns a value into rows, which are written to
 * its table; its `match` turns a search value into a predicate that finds (or does not find)
 * those rows.
 */

const PROJECT = '00000000-0000-4000-8000-000000000013';
const R4 = readR4File<{ entry: { resource: SearchParameterResource }[] }>('search-parameters.json').entry.map(
  (e) => e.resource,
);

function observationParam(code: string): ParamDef {
  const sp = R4.find((p) => p.code === code && p.base.includes('Observation'))!;
  return toParamDef(sp, 'Observation', (url) => R4.find((p) => p.url === url)?.type)!;
}

const observation: Resource = {
  resourceType: 'Observation',
  id: 'rt-1',
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '2345-7', display: 'Glucose' }] },
  effectiveDateTime: '2024-03-15',
  valueQuantity: { value: 5.4, unit: 'mg', system: 'http://unitsofmeasure.org', code: 'mg' },
} as Resource;

let db: TestDatabase;
let pool: pg.Pool;
let client: pg.PoolClient;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 1 });
  client = await pool.connect();
});
afterAll(async () => {
  client?.release();
  await pool?.end();
  await db?.drop();
});

/** Indexes the Observation's value of `param` with its kind, writes the rows, and searches them for `value`. */
async function roundTrip(param: ParamDef, value: string): Promise<boolean> {
  const kind = kindOf(param.type)!;
  const rows = emptyRowSet();
  const res = observation as Record<string, unknown>;
  const values = param.evaluate!([{ value: observation, type: 'Observation' }], res);
  kind.index(values, { param, code: param.code, grp: 0 }, rows, { resource: res, evaluated: res, extractRows });
  const id = `${param.code}-${Math.random().toString(36).slice(2)}`;
  await writeIndexRows(client, [{ resourceType: 'Observation', id, projectId: PROJECT, rows, replace: false }]);
  const ctx = new QueryContext(new SearchParamRegistry(), PROJECT, [PROJECT], 'https://example.org/fhir/R4/', true);
  const filter = { code: param.code, operator: Operator.EQUALS, value };
  const match = kind.match!(ctx, { x: 'x', items: valueItems(filter, kind.prefixed), filter, param });
  const found = await client.query(
    `SELECT 1 FROM ${TABLES[match.kind].table} x WHERE x.resource_id = ${ctx.bind(id)} AND x.code = ${ctx.bind(match.code)} AND (${match.predicate})`,
    ctx.params,
  );
  return found.rowCount! > 0;
}

describe('a kind indexes and queries its own values', () => {
  it('quantity: compared in the UCUM base unit, with prefixes', async () => {
    const param = observationParam('value-quantity');
    expect(await roundTrip(param, '5.4|http://unitsofmeasure.org|mg')).toBe(true);
    expect(await roundTrip(param, '0.0054|http://unitsofmeasure.org|g')).toBe(true);
    expect(await roundTrip(param, 'gt5|http://unitsofmeasure.org|mg')).toBe(true);
    expect(await roundTrip(param, 'ge6|http://unitsofmeasure.org|mg')).toBe(false);
    expect(await roundTrip(param, '5.4')).toBe(true);
  });

  it('token: by code, system|code, and no system', async () => {
    const param = observationParam('code');
    expect(await roundTrip(param, '2345-7')).toBe(true);
    expect(await roundTrip(param, 'http://loinc.org|2345-7')).toBe(true);
    expect(await roundTrip(param, 'http://snomed.info/sct|2345-7')).toBe(false);
    expect(await roundTrip(param, '|2345-7')).toBe(false);
  });

  it('date: a day as a range, with prefixes', async () => {
    const param = observationParam('date');
    expect(await roundTrip(param, '2024-03-15')).toBe(true);
    expect(await roundTrip(param, 'ge2024-03')).toBe(true);
    expect(await roundTrip(param, 'lt2024-03-15')).toBe(false);
    expect(await roundTrip(param, 'sa2024-03-14')).toBe(true);
  });
});
