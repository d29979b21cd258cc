import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateId, type Resource } from '@hearth/core';
import { getR4ResourceTypes } from '@hearth/definitions';
import { createTestApp, type TestApp } from '../../test/app.js';
import { Repository } from '../../storage/repository.js';
import type { ParamDef } from '../registry/params.js';
import { generateFor } from './generate.js';
import { auth } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

/**
 * Walks every R4 SearchParameter on every type it applies to: writes a resource carrying a
 * generated value for it, then searches by that value and expects to find the resource.
 */
it('finds a resource by every R4 search parameter', { timeout: 600_000 }, async () => {
  const projectId =
    (t as TestApp & { testProject?: { projectId: string } }).testProject?.projectId ?? t.services.superAdminProjectId;
  // Generated resources carry only the searched value: write them without validation.
  const repo = new Repository(
    { ...t.services.repositoryDeps, validator: { validate: () => [] } },
    { projectId, readProjects: [projectId], system: true },
  );
  const cases: { param: ParamDef; value: string; resource: Resource }[] = [];
  const skipped: string[] = [];
  let n = 0;
  for (const type of getR4ResourceTypes()) {
    for (const param of t.services.search.registry.base.byType().get(type)?.values() ?? []) {
      if (param.column || param.custom || !param.url.startsWith('http://hl7.org/fhir/SearchParameter/')) continue;
      // Full-text and named queries have no expression: _text, _content, _query (not supported).
      if (!param.expression) continue;
      const generated = generateFor(param, ++n);
      if (!generated) {
        skipped.push(`${type}.${param.code} (${param.type}: ${param.expression ?? 'no expression'})`);
        continue;
      }
      cases.push({ param, value: generated.value, resource: { ...generated.resource, id: generateId() } as Resource });
    }
  }
  for (let i = 0; i < cases.length; i += 200) {
    await repo.createMany(cases.slice(i, i + 200).map((c) => c.resource));
  }
  const failed: string[] = [];
  for (const c of cases) {
    const query = `${encodeURIComponent(c.param.code)}=${encodeURIComponent(c.value)}&_id=${c.resource.id}`;
    let res: { statusCode: number; body: string };
    if (c.param.resourceType === 'AuditEvent') {
      // Over HTTP an admin's AuditEvent search reads the access trail (audit/search.ts, its own
      // parameters); the stored AuditEvent resources, which members search, go through the engine.
      const body = await t.services.search.service
        .search(repo, {
          resourceType: 'AuditEvent',
          params: new URLSearchParams(query),
          fhirBase: 'http://localhost/fhir/R4/',
          strict: true,
        })
        .then(
          (text) => ({ statusCode: 200, body: text }),
          (err: Error) => ({ statusCode: 400, body: err.message }),
        );
      res = body;
    } else {
      res = await t.app.inject({ url: `/fhir/R4/${c.param.resourceType}?${query}`, headers: auth(t) });
    }
    const found = res.statusCode === 200 ? (JSON.parse(res.body) as { entry?: { resource: { id: string } }[] }) : {};
    if (res.statusCode !== 200 || found.entry?.[0]?.resource.id !== c.resource.id) {
      failed.push(
        `${c.param.resourceType}.${c.param.code}=${c.value} -> ${res.statusCode} ${res.statusCode === 200 ? 'not found' : res.body.slice(0, 200)}`,
      );
    }
  }
  console.log(
    `every R4 search parameter: ${cases.length} (parameter, type) pairs searched, ${cases.length - failed.length} found, ${failed.length} failed, ${skipped.length} without a generated value`,
  );
  if (failed.length) console.log(`failed:\n  ${failed.join('\n  ')}`);
  if (skipped.length) console.log(`skipped:\n  ${skipped.join('\n  ')}`);
  expect(failed).toEqual([]);
  expect(cases.length).toBeGreaterThan(1500);
});
