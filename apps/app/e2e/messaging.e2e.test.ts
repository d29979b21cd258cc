/**
 * Secure messaging end to end in Chromium against a real server: staff start a thread with a
 * patient who is offline (the patient is emailed, through a local SMTP server, without the
 * content); the patient, signed in in a second browser context, sees the thread with its unread
 * badge, and a second message arrives live; the patient replies with a file attached; the staff's
 * unread count in the navigation rises live and falls once the thread is opened, and the file
 * comes back intact; the screens fit a phone, a tablet and a desktop.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HearthClient, MemoryStorage, type Communication } from '@hearth/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { addTestMember, type TestMember } from '../../server/src/test/auth.js';
import { emailText, startTestSmtpServer, type TestSmtpServer } from '../../server/src/test/smtp.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

describe.runIf(chromiumForSuite())('messaging in Chromium', () => {
  let server: TestApp;
  let smtp: TestSmtpServer;
  let browser: Browser;
  let staffContext: BrowserContext;
  let patientContext: BrowserContext;
  let staff: Page;
  let patientPage: Page;
  let patient: TestMember;
  let api: HearthClient;
  let threadId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();

  async function signIn(page: Page, email: string, password: string): Promise<void> {
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  }

  beforeAll(async () => {
    await ensureAppBuilt();
    smtp = await startTestSmtpServer();
    server = await createTestApp({
      listen: true,
      config: { smtpHost: '127.0.0.1', smtpPort: smtp.port, smtpSecure: false },
    });
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage(), cacheTime: 0 });
    api.setAccessToken(server.token);
    // A patient portal user: their own record and messages, and the live subscription to them.
    const policy = await api.createResource({
      resourceType: 'AccessPolicy',
      name: 'Patient portal',
      resource: [
        { resourceType: 'Patient', criteria: 'Patient?_id=%patient.id', readonly: true },
        { resourceType: 'Communication', criteria: 'Communication?_compartment=%patient' },
        { resourceType: 'Subscription', criteria: 'Subscription?criteria:exact=Communication?recipient=%patient' },
        { resourceType: 'Binary' },
        { resourceType: 'Practitioner', readonly: true },
      ],
    });
    const ada = await api.createResource({ resourceType: 'Patient', name: [{ given: ['Ada'], family: 'Lovelace' }] });
    patient = await addTestMember(server.app, server.services, server.testProject.projectId, {
      profile: ada,
      membership: { accessPolicy: { reference: `AccessPolicy/${policy.id}` } },
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    staffContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    patientContext = await browser.newContext({ viewport: { width: 390, height: 844 } });
    staff = await staffContext.newPage();
    patientPage = await patientContext.newPage();
    staff.setDefaultTimeout(30_000);
    patientPage.setDefaultTimeout(30_000);
    await signIn(staff, server.testProject.email, server.testProject.password);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await smtp?.close();
  });

  it('staff start a thread; the offline patient is emailed a link, without the content', async () => {
    await staff.getByRole('link', { name: 'Messages' }).click();
    await staff.getByRole('button', { name: 'New message' }).click();
    const dialog = staff.getByRole('dialog', { name: 'New message' });
    await dialog.getByRole('textbox', { name: 'Patient' }).fill('Lovelace');
    await staff.getByRole('option', { name: /Ada Lovelace/ }).click();
    await dialog.getByRole('textbox', { name: 'Topic' }).fill('Blood test follow-up');
    await dialog.getByRole('textbox', { name: 'Message' }).fill('Your potassium is a little high.');
    await dialog.getByRole('button', { name: 'Send' }).click();
    await staff.waitForURL(/\/messages\/[\w-]+$/);
    threadId = staff.url().split('/').pop() as string;
    await staff.getByRole('list', { name: 'Messages' }).getByText('Your potassium is a little high.').waitFor();

    const mail = await smtp.waitFor(patient.email);
    const text = emailText(mail.raw);
    expect(text).toContain('Subject: You have a new message');
    expect(text).toContain(`/messages/${threadId}`);
    expect(text).not.toContain('potassium');
  }, 180_000);

  it('the patient sees the thread, a new message arrives live, and they reply with a file', async () => {
    await signIn(patientPage, patient.email, patient.password);
    await patientPage.getByRole('button', { name: 'Toggle navigation' }).click();
    await patientPage.getByRole('link', { name: 'Messages, 1 unread' }).click();
    await patientPage.getByRole('button', { name: /^Blood test follow-up 1 unread/ }).click();
    const messages = patientPage.getByRole('list', { name: 'Messages' });
    await messages.getByText('Your potassium is a little high.').waitFor();
    // Opened: read. The staff's view shows it under their message (read receipts are not live: on reload).
    await patientPage.getByRole('link', { name: 'Messages', exact: true }).waitFor({ state: 'attached' });
    await staff.reload();
    await staff.getByText('· Read').waitFor();

    // Staff write again: the patient's open thread shows it without a reload.
    await staff.getByRole('textbox', { name: 'Reply' }).fill('Please avoid bananas this week.');
    await staff.getByRole('button', { name: 'Send' }).click();
    await messages.getByText('Please avoid bananas this week.').waitFor();

    // The staff member leaves the thread; the patient replies with a file.
    await staff.getByRole('link', { name: 'Hearth home' }).click();
    const file = join(tmpdir(), `diet-${Date.now()}.txt`);
    writeFileSync(file, 'Breakfast: oats. Lunch: rice.');
    await patientPage.locator('input[type="file"]').last().setInputFiles(file);
    await patientPage.getByText('Attachment 1').waitFor();
    await patientPage.getByRole('textbox', { name: 'Reply' }).fill('Here is my diet diary.');
    await patientPage.getByRole('button', { name: 'Send' }).click();
    await messages.getByText('Here is my diet diary.').waitFor();
    await patientPage.screenshot({ path: `${screenshotDir}/messaging-patient-390.png`, fullPage: true });
  }, 180_000);

  it('the staff unread count rises live, falls once read, and the file comes back intact', async () => {
    // No reload: the navigation hears the reply over the websocket.
    await staff.getByRole('link', { name: 'Messages, 1 unread' }).waitFor();
    await staff.getByRole('link', { name: 'Messages, 1 unread' }).click();
    await staff.getByRole('button', { name: /^Blood test follow-up 1 unread/ }).click();
    const messages = staff.getByRole('list', { name: 'Messages' });
    await messages.getByText('Here is my diet diary.').waitFor();
    await staff.getByRole('link', { name: 'Messages', exact: true }).waitFor();
    const [download] = await Promise.all([
      staff.waitForEvent('popup'),
      messages.getByRole('button', { name: /Attachment: diet-/ }).click(),
    ]);
    const body = await download.locator('body').innerText();
    expect(body).toContain('Breakfast: oats. Lunch: rice.');
    await download.close();
    const reply = (
      (await api.searchResources(
        'Communication',
        { 'part-of': `Communication/${threadId}`, _sort: '-sent' },
        {
          cache: 'no-cache',
        },
      )) as Communication[]
    )[0];
    expect(reply.sender?.reference).toBe(`Patient/${patient.profile.id}`);
    // The attachment is stored as Binary/{id} and read back as a signed download URL.
    expect(reply.payload?.[1]?.contentAttachment?.url).toMatch(/\/storage\/[0-9a-f-]+\?exp=\d+&sig=/);
  }, 180_000);

  it('fits a phone, a tablet and a desktop', async () => {
    const problems: string[] = [];
    for (const width of [390, 820, 1280]) {
      await staff.setViewportSize({ width, height: 900 });
      await staff.goto(url(`/messages/${threadId}`));
      await staff.getByRole('list', { name: 'Messages' }).getByText('Here is my diet diary.').waitFor();
      await staff.waitForLoadState('networkidle');
      const overflow = await overflowsHorizontally(staff);
      if (overflow) problems.push(`${width} scrolls sideways: ${JSON.stringify(overflow)}`);
      const violations = await seriousViolations(staff);
      if (violations.length) problems.push(`${width}:\n${describeViolations(violations)}`);
      await staff.screenshot({ path: `${screenshotDir}/messaging-${width}.png`, fullPage: true });
    }
    await patientPage.goto(url('/messages'));
    await patientPage.getByRole('list', { name: 'Message threads' }).waitFor();
    const violations = await seriousViolations(patientPage);
    if (violations.length) problems.push(`patient list:\n${describeViolations(violations)}`);
    expect(problems).toEqual([]);
  }, 180_000);
});
