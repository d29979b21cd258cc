/**
 * Materialised views against a real server and database: $materialize builds the table, writes
 * (create, update, delete) follow into it, the read-only role reads it and nothing else, a member
 * who is not an admin is refused. The conformance cases that have rows go through the SQL path
 * (table types, multi-row insert, read back) too.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember } from '../test/auth.js';
import { createTestApp, type TestApp } from '../test/app.js';
import { canonicalRows, loadSofCases } from '../test/sof-suite.js';
import { createTableSql, insertRows, quoteIdent, sqlType } from './reporting-sql.js';
import { compileView } from './view.js';

const FHIR = 'application/fhir+json';
let t: TestApp;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const loginRole = `bi_${randomBytes(5).toString('hex')}`;
const loginPassword = randomBytes(12).toString('hex');
let readerRole: string | undefined;

async function request(method: string, url: string, payload?: Json, headers: Json = t.authHeaders) {
  return t.app.inject({
    method: method as 'POST',
    url: `/fhir/R4/${url}`,
    headers: { ...headers, ...(payload ? { 'content-type': FHIR } : {}) },
    ...(payload ? { payload } : {}),
  });
}

async function create(resource: Json): Promise<Json> {
  const res = await request('POST', resource.resourceType as string, resource);
  if (res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return res.json();
}

const VIEW = {
  resourceType: 'ViewDefinition',
  name: 'patient_names',
  status: 'active',
  resource: 'Patient',
  select: [
    {
      column: [
        { name: 'id', path: 'getResourceKey()', type: 'id' },
        { name: 'active', path: 'active', type: 'boolean' },
        { name: 'birth_date', path: 'birthDate', type: 'date' },
        { name: 'given', path: 'name.given', type: 'string', collection: true },
      ],
    },
    { forEachOrNull: 'name', column: [{ name: 'family', path: 'family', type: 'string' }] },
  ],
};

let view: Json;
let schema: string;

async function table(): Promise<Json[]> {
  await t.services.materializer.idle();
  const res = await t.pool.query(
    `SELECT id, active, birth_date, given, family FROM ${quoteIdent(schema)}.patient_names ORDER BY family NULLS LAST`,
  );
  return res.rows;
}

beforeAll(async () => {
  t = await createTestApp();
  view = await create(VIEW);
}, 60_000);

afterAll(async () => {
  await t?.close();
  // Roles are server-wide: remove the test's once its database (holding their grants) is gone.
  const admin = new pg.Client({ connectionString: t.db.url.replace(/\/[^/]+$/, '/postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP ROLE IF EXISTS ${quoteIdent(loginRole)}`);
    if (readerRole) await admin.query(`DROP ROLE IF EXISTS ${quoteIdent(readerRole)}`);
  } finally {
    await admin.end();
  }
});

describe('ViewDefinition/{id}/$materialize', () => {
  it('builds the table in the project’s reporting schema', async () => {
    await create({
      resourceType: 'Patient',
      active: true,
      birthDate: '1980',
      name: [{ family: 'Ames', given: ['A', 'B'] }],
    });
    await create({ resourceType: 'Patient', active: false });
    const res = await request('POST', `ViewDefinition/${view.id}/$materialize`, { resourceType: 'Parameters' });
    expect(res.statusCode).toBe(200);
    const out = Object.fromEntries(
      (res.json().parameter as Json[]).map((p) => [p.name, p.valueString ?? p.valueInteger]),
    );
    schema = out.schema;
    readerRole = out.role;
    expect(out.schema).toBe(`reporting_${t.testProject.projectId.replace(/-/g, '')}`);
    expect(out).toMatchObject({ table: 'patient_names', rows: 2 });
    expect(await table()).toEqual([
      { id: expect.any(String), active: true, birth_date: '1980', given: ['A', 'B'], family: 'Ames' },
      { id: expect.any(String), active: false, birth_date: null, given: [], family: null },
    ]);
  });

  it('follows creates, updates and deletes of the view’s type', async () => {
    const p = await create({ resourceType: 'Patient', name: [{ family: 'Cole' }, { family: 'Dunn' }] });
    expect((await table()).map((r) => r.family)).toEqual(['Ames', 'Cole', 'Dunn', null]);
    const updated = await request('PUT', `Patient/${p.id}`, { ...p, name: [{ family: 'Eads' }] });
    expect(updated.statusCode).toBe(200);
    expect((await table()).map((r) => r.family)).toEqual(['Ames', 'Eads', null]);
    expect((await request('DELETE', `Patient/${p.id}`)).statusCode).toBe(204);
    expect((await table()).map((r) => r.family)).toEqual(['Ames', null]);
    // Another type leaves the table alone.
    await create({ resourceType: 'Practitioner', name: [{ family: 'Zed' }] });
    expect(await table()).toHaveLength(2);
  });

  it('lets the read-only role read the view and nothing else', async () => {
    await t.pool.query(`CREATE ROLE ${quoteIdent(loginRole)} LOGIN PASSWORD '${loginPassword}'`);
    await t.pool.query(`GRANT ${quoteIdent(readerRole as string)} TO ${quoteIdent(loginRole)}`);
    const url = new URL(t.db.url);
    url.username = loginRole;
    url.password = loginPassword;
    const bi = new pg.Client({ connectionString: url.toString() });
    await bi.connect();
    try {
      const rows = await bi.query(`SELECT family FROM ${quoteIdent(schema)}.patient_names ORDER BY family`);
      expect(rows.rows.map((r) => r.family)).toEqual(['Ames', null]);
      await expect(bi.query(`DELETE FROM ${quoteIdent(schema)}.patient_names`)).rejects.toThrow(/permission denied/);
      await expect(bi.query('SELECT content FROM resource LIMIT 1')).rejects.toThrow(/permission denied/);
    } finally {
      await bi.end();
    }
  });

  it('refuses a member who is not a project admin', async () => {
    const member = await addTestMember(t.app, t.services, t.testProject.projectId);
    const res = await request(
      'POST',
      `ViewDefinition/${view.id}/$materialize`,
      { resourceType: 'Parameters' },
      member.headers,
    );
    expect(res.statusCode).toBe(403);
  });

  it('drops the table on drop=true', async () => {
    const res = await request('POST', `ViewDefinition/${view.id}/$materialize?drop=true`, {
      resourceType: 'Parameters',
    });
    expect(res.statusCode).toBe(200);
    const left = await t.pool.query('SELECT to_regclass($1) AS t', [`${schema}.patient_names`]);
    expect(left.rows[0].t).toBeNull();
  });
});

const cases = loadSofCases().filter((c) => !c.expectError);

describe.runIf(cases.length > 0)('SQL on FHIR v2 conformance through the materialised table', () => {
  it('reads back every case’s expected rows from a table', async () => {
    const failures: string[] = [];
    const client = await t.pool.connect();
    try {
      await client.query('CREATE SCHEMA sof_conformance');
      for (const [i, c] of cases.entries()) {
        const compiled = compileView(c.view);
        const name = `case_${i}`;
        await client.query(createTableSql('sof_conformance', name, compiled.columns));
        const rows = c.resources.flatMap((r) =>
          compiled.rows(r).map((row) => ({ resourceId: String(r.id), version: 1, row })),
        );
        await insertRows(client, 'sof_conformance', name, compiled.columns, rows);
        const names = compiled.columns.map((col) => quoteIdent(col.name)).join(', ');
        const back = await client.query(`SELECT ${names} FROM sof_conformance.${name}`);
        // numeric comes back as text from pg: read it as the number it holds.
        const read = back.rows.map((row: Json) =>
          Object.fromEntries(
            compiled.columns.map((col) => [
              col.name,
              sqlType(col) === 'numeric' && row[col.name] !== null ? Number(row[col.name]) : row[col.name],
            ]),
          ),
        );
        if (JSON.stringify(canonicalRows(read)) !== JSON.stringify(canonicalRows(c.expect ?? []))) {
          failures.push(`${c.file}: ${c.title}: ${JSON.stringify(read).slice(0, 300)}`);
        }
      }
    } finally {
      client.release();
    }
    expect(failures).toEqual([]);
    expect(cases.length).toBeGreaterThan(100);
  }, 120_000);
});
