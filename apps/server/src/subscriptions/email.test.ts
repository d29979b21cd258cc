import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { startTestSmtpServer, type TestSmtpServer } from '../test/smtp.js';
import { FHIR_JSON, post, waitFor } from '../bots/testing.js';

let t: TestApp;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  // The SMTP relay of the auth module's mailer (HEARTH_SMTP_*) carries subscription email too.
  t = await createTestApp({ listen: true, config: { smtpHost: '127.0.0.1', smtpPort: smtp.port, smtpSecure: false } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('email subscriptions', () => {
  it('emails the endpoint address with a link and, when asked, the resource', async () => {
    const sub = await post(
      t,
      'fhir/R4/Subscription',
      {
        resourceType: 'Subscription',
        status: 'active',
        reason: 'New critical lab result',
        criteria: 'Observation?code=critical',
        channel: { type: 'email', endpoint: 'mailto:oncall@example.org', payload: 'application/fhir+json' },
      },
      FHIR_JSON,
    );
    expect(sub.status).toBe(201);
    const obs = await post(
      t,
      'fhir/R4/Observation',
      { resourceType: 'Observation', status: 'final', code: { coding: [{ code: 'critical' }] } },
      FHIR_JSON,
    );
    const id = (obs.json() as Resource).id as string;
    const mail = await smtp.waitFor('oncall@example.org');
    expect(mail.raw).toContain('Subject: New critical lab result');
    expect(mail.raw).toContain(`Observation/${id}`);
    expect(mail.raw).toContain('"resourceType": "Observation"');
    const audit = await waitFor(async () => {
      const rows = await t.pool.query<{ content: string }>(
        `SELECT content FROM "AuditEvent" WHERE NOT deleted AND content LIKE $1`,
        [`%Subscription/${(sub.json() as Resource).id}%`],
      );
      return rows.rows[0] ? (JSON.parse(rows.rows[0].content) as Record<string, unknown>) : undefined;
    });
    expect(audit.outcome).toBe('0');
    expect(String(audit.outcomeDesc)).toContain('oncall@example.org');
  });
});

describe('email subscriptions on a server without an SMTP relay', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await createTestApp({ listen: true });
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('fail the delivery, saying why, instead of counting a dropped email as sent', async () => {
    const sub = await post(
      bare,
      'fhir/R4/Subscription',
      {
        resourceType: 'Subscription',
        status: 'active',
        reason: 'Nobody will get this',
        criteria: 'Observation?code=unsent',
        channel: { type: 'email', endpoint: 'mailto:oncall@example.org' },
      },
      FHIR_JSON,
    );
    expect(sub.status).toBe(201);
    await post(
      bare,
      'fhir/R4/Observation',
      { resourceType: 'Observation', status: 'final', code: { coding: [{ code: 'unsent' }] } },
      FHIR_JSON,
    );
    const audit = await waitFor(async () => {
      const rows = await bare.pool.query<{ content: string }>(
        `SELECT content FROM "AuditEvent" WHERE NOT deleted AND content LIKE $1`,
        [`%Subscription/${(sub.json() as Resource).id}%`],
      );
      return rows.rows[0] ? (JSON.parse(rows.rows[0].content) as Record<string, unknown>) : undefined;
    });
    expect(audit.outcome).not.toBe('0');
    expect(String(audit.outcomeDesc)).toContain('Email is not configured');
  });
});
