import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '@hearth/core';
import { createTestApp, type TestApp } from '../test/app.js';
import { addTestMember } from '../test/auth.js';
import { emailText, startTestSmtpServer, type TestSmtpServer } from '../test/smtp.js';
import type { EmailMessage, Mailer } from '../platform/email.js';
import { sendProjectEmail, VERIFIED_DOMAINS_SETTING } from './send.js';

let smtp: TestSmtpServer;
let t: TestApp;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  t = await createTestApp({ config: { smtpHost: '127.0.0.1', smtpPort: smtp.port } });
  // What a super admin does: the project's verified sender domains.
  const repo = t.services.systemRepo(t.testProject.projectId);
  const project = (await repo.readResource('Project', t.testProject.projectId)).resource;
  await repo.updateResource({
    ...project,
    systemSetting: [{ name: VERIFIED_DOMAINS_SETTING, valueString: 'clinic.example, mail.clinic.example' }],
  } as Resource);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

function send(body: unknown, headers: Record<string, string> = t.authHeaders) {
  return t.app.inject({ method: 'POST', url: '/email/v1/send', headers, payload: body as Record<string, unknown> });
}

describe('POST /email/v1/send', () => {
  it('sends a project admin email through SMTP from a verified domain', async () => {
    const res = await send({
      from: 'Front Desk <desk@clinic.example>',
      to: ['ana@patients.example'],
      cc: 'nurse@clinic.example',
      subject: 'Your appointment',
      text: 'See you on Monday at 9.',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ severity: 'information' }] });
    const mail = await smtp.waitFor('ana@patients.example');
    expect(mail.from).toBe('desk@clinic.example');
    expect(mail.to).toEqual(['ana@patients.example', 'nurse@clinic.example']);
    expect(mail.raw).toContain('Subject: Your appointment');
    expect(emailText(mail.raw)).toContain('See you on Monday at 9.');
    // The same through /api, from the second domain.
    const viaApi = await t.app.inject({
      method: 'POST',
      url: '/api/email/v1/send',
      headers: t.authHeaders,
      payload: { from: 'lab@mail.clinic.example', to: 'bo@patients.example', subject: 'Results', html: '<p>Ready</p>' },
    });
    expect(viaApi.statusCode, viaApi.body).toBe(200);
    expect((await smtp.waitFor('bo@patients.example')).raw).toContain('<p>Ready</p>');
  });

  it('refuses senders outside the verified domains, members who are not admins, and bad input', async () => {
    const spoof = await send({ from: 'ceo@bank.example', to: 'x@patients.example', subject: 'Hi', text: 'x' });
    expect(spoof.statusCode).toBe(403);
    expect(spoof.body).toContain('bank.example is not a verified sender domain');
    const member = await addTestMember(t.app, t.services, t.testProject.projectId);
    const notAdmin = await send(
      { from: 'desk@clinic.example', to: 'x@patients.example', subject: 'Hi', text: 'x' },
      member.headers,
    );
    expect(notAdmin.statusCode).toBe(403);
    expect(notAdmin.body).toContain('Only project admins and bots');
    const cases: [Record<string, unknown>, string][] = [
      [{ from: 'desk@clinic.example', subject: 'Hi', text: 'x' }, 'to'],
      [{ from: 'desk@clinic.example', to: 'not-an-address', subject: 'Hi', text: 'x' }, 'to[0]'],
      [{ from: 'desk@clinic.example', to: 'x@p.example', text: 'x' }, 'subject'],
      [{ from: 'desk@clinic.example', to: 'x@p.example', subject: 'a\r\nBcc: all@p.example', text: 'x' }, 'subject'],
      [{ from: 'desk@clinic.example', to: 'x@p.example', subject: 'Hi' }, 'text'],
      [{ to: 'x@p.example', subject: 'Hi', text: 'x' }, 'from'],
    ];
    for (const [body, where] of cases) {
      const res = await send(body);
      expect(res.statusCode, where).toBe(400);
      expect((res.json() as { issue: { expression?: string[] }[] }).issue[0].expression).toEqual([where]);
    }
    expect((await t.app.inject({ method: 'POST', url: '/email/v1/send', payload: {} })).statusCode).toBe(401);
  });
});

describe('sendProjectEmail', () => {
  const sent: EmailMessage[] = [];
  const mailer: Mailer = { send: async (m) => void sent.push(m) };
  const systemSettings = [{ name: VERIFIED_DOMAINS_SETTING, valueString: 'clinic.example' }];
  const message = { from: 'bot@clinic.example', to: 'a@p.example', subject: 'Reminder', text: 'Take your pills' };

  it('lets a bot send, and nobody without a verified domain', async () => {
    await sendProjectEmail(mailer, { projectId: 'p', projectAdmin: false, profile: 'Bot/b1', systemSettings }, message);
    expect(sent).toEqual([
      { from: 'bot@clinic.example', to: ['a@p.example'], subject: 'Reminder', text: 'Take your pills' },
    ]);
    await expect(
      sendProjectEmail(
        mailer,
        { projectId: 'p', projectAdmin: true, profile: 'Practitioner/x', systemSettings: [] },
        message,
      ),
    ).rejects.toThrow(/no verified sender domain/);
  });

  it('answers 503 when the server has no SMTP relay', async () => {
    await expect(
      sendProjectEmail(
        { delivers: false, send: async () => undefined },
        { projectId: 'p', projectAdmin: true, profile: 'Practitioner/x', systemSettings },
        message,
      ),
    ).rejects.toMatchObject({ outcome: { id: 'service-unavailable' } });
  });
});
