/** Tamper evidence: altering, deleting or inserting entries by SQL breaks the chain, and $verify-audit says where. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';
import { createTestProject, type TestProject } from '../test/auth.js';
import { verifyChain } from './chain.js';
import { AuditWriter } from './writer.js';
import { entryOfAccess } from './stored-entry.js';

let t: TestApp;
let project: TestProject;

async function verify(headers = project.headers) {
  const res = await t.app.inject({ url: `/fhir/R4/Project/${project.projectId}/$verify-audit`, headers });
  expect(res.statusCode, res.body).toBe(200);
  const params = res.json().parameter as {
    name: string;
    valueBoolean?: boolean;
    valueInteger?: number;
    valueString?: string;
  }[];
  const get = (name: string) => params.find((p) => p.name === name);
  return {
    intact: get('intact')?.valueBoolean,
    checked: get('checked')?.valueInteger,
    brokenAt: get('brokenAt')?.valueInteger,
    reason: get('reason')?.valueString,
  };
}

/** A project of its own with a dozen writes and reads in its chain (tampering tests spoil it). */
async function seeded(): Promise<TestProject> {
  const p = await createTestProject(t.app, t.services, 'Chained');
  for (let i = 0; i < 6; i++) {
    const res = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/Patient',
      headers: { ...p.headers, 'content-type': 'application/fhir+json' },
      payload: { resourceType: 'Patient', name: [{ family: `P${i}` }] },
    });
    expect(res.statusCode).toBe(201);
    await t.app.inject({ url: `/fhir/R4/Patient/${res.json().id}`, headers: p.headers });
  }
  await t.services.audit.writer.flush();
  return p;
}

/** A fresh project whose chain `change` (SQL, $1 its id) spoils; then `check` runs. */
async function tampered(change: string, check: () => Promise<void>) {
  project = await seeded();
  await t.pool.query(change, [project.projectId]);
  await check();
}

beforeAll(async () => {
  t = await createTestApp();
  project = await seeded();
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('the chain', () => {
  it('holds as written', async () => {
    const report = await verify();
    expect(report.intact).toBe(true);
    expect(report.checked).toBeGreaterThanOrEqual(12);
  });

  it('an altered entry is found', async () => {
    await tampered(
      `UPDATE audit_event SET content = replace(content, '"requestId":"', '"requestId":"forged-') WHERE project_id = $1 AND seq = 5`,
      async () => {
        const report = await verify();
        expect(report.intact).toBe(false);
        expect(report.brokenAt).toBe(5);
        expect(report.reason).toMatch(/altered/);
      },
    );
  });

  it('an altered search column is found', async () => {
    await tampered(
      `UPDATE audit_event SET agent = ARRAY['Practitioner/someone-else'] WHERE project_id = $1 AND seq = 7`,
      async () => {
        const report = await verify();
        expect([report.intact, report.brokenAt]).toEqual([false, 7]);
      },
    );
  });

  it('a deleted entry is found, in the middle or at the end', async () => {
    await tampered('DELETE FROM audit_event WHERE project_id = $1 AND seq = 9', async () => {
      const report = await verify();
      expect([report.intact, report.brokenAt]).toEqual([false, 9]);
      expect(report.reason).toMatch(/missing/);
    });
    await tampered(
      'DELETE FROM audit_event WHERE project_id = $1 AND seq = (SELECT max(seq) FROM audit_event WHERE project_id = $1)',
      async () => {
        const report = await verify();
        expect(report.intact).toBe(false);
        expect(report.reason).toMatch(/missing/);
      },
    );
  });

  it('a forged entry re-hashed by someone who does not rewrite every later link is found', async () => {
    await tampered(
      `UPDATE audit_event SET content = replace(content, '"requestId":"', '"requestId":"forged-'),
              hash = sha256(prev_hash || convert_to(project_id::text || E'\\n' || seq::text || E'\\n' || replace(content, '"requestId":"', '"requestId":"forged-'), 'UTF8'))
        WHERE project_id = $1 AND seq = 4`,
      async () => {
        const report = await verify();
        expect(report.intact).toBe(false);
        expect(report.brokenAt).toBe(5);
        expect(report.reason).toMatch(/does not link/);
      },
    );
  });

  it('only the project admin may verify', async () => {
    const other = await createTestProject(t.app, t.services, 'Other');
    const res = await t.app.inject({
      url: `/fhir/R4/Project/${project.projectId}/$verify-audit`,
      headers: other.headers,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().resourceType).toBe('OperationOutcome');
  });

  it('stays one sequence when several writers flush the same project at once', async () => {
    project = await seeded();
    const writers = [0, 1, 2].map(
      () =>
        new AuditWriter({
          pool: t.pool,
          logger: t.services.audit['options'].logger,
          maxBuffered: 10_000,
          batchSize: 50,
          flushIntervalMs: 60_000,
        }),
    );
    const info = { projectId: project.projectId, agent: { profile: 'Practitioner/x' }, requestId: 'concurrent' };
    for (const writer of writers) {
      for (let i = 0; i < 120; i++) {
        writer.record(
          entryOfAccess(info, { interaction: 'read', action: 'R', patients: [], status: 200, recorded: new Date() }),
        );
      }
    }
    await Promise.all(writers.map((w) => w.flush()));
    const report = await verifyChain(t.pool, project.projectId);
    expect(report.broken).toBeUndefined();
    expect(report.checked).toBe(report.head);
  });
});
