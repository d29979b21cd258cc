import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { FHIR_JSON, post, waitFor } from '../bots/testing.js';
import { startReceiver, type Receiver } from './testing.js';

// No allow-list: the server's defaults.
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await createTestApp({ listen: true, config: { jobRetryDelaySeconds: 1 } });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

describe('rest-hook endpoints cannot reach internal addresses', () => {
  it('blocks loopback, private, link-local and metadata endpoints, and names resolving to them', async () => {
    const endpoints = [
      `http://127.0.0.1:${receiver.port}/a`,
      `http://localhost:${receiver.port}/b`,
      `http://[::1]:${receiver.port}/c`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/d`,
      'http://10.0.0.7/e',
      'http://172.16.5.4/f',
      'http://192.168.1.1/g',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[fe80::1]/h',
      'http://100.100.100.200/latest/meta-data/',
    ];
    const ids: string[] = [];
    for (const endpoint of endpoints) {
      const res = await post(
        t,
        'fhir/R4/Subscription',
        {
          resourceType: 'Subscription',
          status: 'active',
          reason: endpoint,
          criteria: 'Patient?name=Probe',
          channel: { type: 'rest-hook', endpoint, payload: 'application/fhir+json' },
          extension: [
            { url: 'https://medplum.com/fhir/StructureDefinition/subscription-max-attempts', valueInteger: 1 },
          ],
        },
        FHIR_JSON,
      );
      expect(res.status).toBe(201);
      ids.push((res.json() as Resource).id as string);
    }
    await post(t, 'fhir/R4/Patient', { resourceType: 'Patient', name: [{ family: 'Probe' }] }, FHIR_JSON);
    const audits = await waitFor(async () => {
      const rows = await t.pool.query<{ content: string }>(
        `SELECT content FROM "AuditEvent" WHERE NOT deleted AND content LIKE '%subscription-delivery%'`,
      );
      return rows.rows.length >= endpoints.length
        ? rows.rows.map((r) => JSON.parse(r.content) as Record<string, unknown>)
        : undefined;
    }, 20000);
    for (const id of ids) {
      const audit = audits.find((a) => JSON.stringify(a).includes(`Subscription/${id}`));
      expect(audit, id).toBeDefined();
      expect(audit?.outcome).toBe('4');
      expect(String(audit?.outcomeDesc)).toContain('blocked');
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
