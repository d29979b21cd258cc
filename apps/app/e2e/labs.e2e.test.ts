/**
 * Labs end to end in Chromium against a real server: a lipid panel ordered from the patient's Labs
 * tab (tests by type-ahead, priority, the reason a condition of the patient's), its printable
 * requisition, its result entered with a high cholesterol (flagged as it is typed), stored as a
 * DiagnosticReport with its Observations in one transaction that completes the order; the report
 * flags it, shows the previous value and the trend; the results inbox lists it with its unread
 * count until it is acknowledged; and the lab pages fit a phone, a tablet and a desktop.
 */
import { HearthClient, MemoryStorage, type Observation, type ServiceRequest, type Task } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const WIDTHS = [390, 820, 1280];

describe.runIf(chromiumForSuite())('labs in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
  let orderId = '';
  let reportId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();
  const shot = (name: string) => page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true, config: { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD } });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await api.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  }, 300_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page) {
      await shot(`failed-labs-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('orders a lipid panel with a reason and prints its requisition', async () => {
    const patient = await api.createResource({
      resourceType: 'Patient',
      name: [{ given: ['Ada'], family: 'Lovelace' }],
      gender: 'female',
      birthDate: '1965-12-10',
    });
    patientId = patient.id as string;
    const condition = await api.createResource({
      resourceType: 'Condition',
      subject: { reference: `Patient/${patientId}` },
      code: { text: 'Hyperlipidemia' },
    });
    // An earlier cholesterol result: the report compares with it and charts the trend.
    await api.createResource({
      resourceType: 'Observation',
      status: 'final',
      category: [
        { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] },
      ],
      code: { coding: [{ system: 'http://loinc.org', code: '2093-3' }], text: 'Cholesterol, total' },
      subject: { reference: `Patient/${patientId}` },
      effectiveDateTime: '2025-01-15T09:00:00Z',
      valueQuantity: { value: 190, unit: 'mg/dL', system: 'http://unitsofmeasure.org', code: 'mg/dL' },
      referenceRange: [{ high: { value: 199, unit: 'mg/dL', system: 'http://unitsofmeasure.org', code: 'mg/dL' } }],
    });

    await page.goto(url(`/Patient/${patientId}`));
    await page.getByRole('tab', { name: 'Labs' }).click();
    await page.getByRole('region', { name: 'Lab orders' }).getByText('No lab order yet').waitFor();
    await page.getByRole('link', { name: 'Order labs' }).click();
    const form = page.getByRole('form', { name: 'Lab order' });
    await form.getByRole('textbox', { name: 'Tests' }).fill('lipid');
    await page.getByRole('option', { name: /Lipid panel with direct LDL - Serum or Plasma \(57698-3\)/ }).click();
    await page.keyboard.press('Escape');
    // The specimen and the fasting instruction come from the catalogue.
    await expect
      .poll(() => form.getByLabel('Specimen for Lipid panel with direct LDL - Serum or Plasma').inputValue())
      .toBe('Serum, gold or red top (SST)');
    expect(await form.getByLabel('Patient instructions').inputValue()).toMatch(/^Fast for 9–12 hours/);
    await form.getByRole('textbox', { name: 'Priority' }).click();
    await page.getByRole('option', { name: 'Urgent' }).click();
    await form.getByRole('textbox', { name: "Reason: one of the patient's conditions" }).click();
    await page.getByRole('option', { name: 'Hyperlipidemia' }).click();
    await form.getByRole('button', { name: 'Place order' }).click();
    await page.waitForURL(/\/labs\/order\/[^/]+$/);
    orderId = new URL(page.url()).pathname.split('/')[3];
    const order = page.getByRole('region', { name: 'Lab order' });
    await order.getByLabel('Order status').getByText('active').waitFor();
    // Only the transitions an active order allows.
    await order.getByRole('button', { name: 'Mark completed' }).waitFor();
    expect(await order.getByRole('button', { name: 'Place order' }).count()).toBe(0);

    const stored = await api.readResource('ServiceRequest', orderId);
    expect(stored).toMatchObject({
      status: 'active',
      intent: 'order',
      priority: 'urgent',
      code: { coding: [{ system: 'http://loinc.org', code: '57698-3' }] },
      subject: { reference: `Patient/${patientId}` },
      reasonReference: [{ reference: `Condition/${condition.id}` }],
      orderDetail: [{ text: 'Specimen: Serum, gold or red top (SST)' }],
    });
    expect(stored.requester?.reference).toMatch(/^Practitioner\//);
    const requisition = stored.requisition?.value as string;
    expect(requisition).toMatch(/^L\d{6}-[2-9A-Z]{6}$/);

    await order.getByRole('link', { name: `Requisition ${requisition}` }).click();
    const sheet = page.getByRole('region', { name: 'Lab requisition' });
    await sheet.getByLabel('Requisition barcode').getByText(`*${requisition}*`).waitFor();
    await sheet.getByText('Ada Lovelace').waitFor();
    await sheet.getByText('Hyperlipidemia').waitFor();
    await sheet.getByRole('table', { name: 'Tests' }).getByText('URGENT').waitFor();
    // window.print stubbed to count the calls (a real print dialog would block the page).
    await page.evaluate(() => {
      const w = globalThis as unknown as { printed: number; print: () => void };
      w.printed = 0;
      w.print = () => {
        w.printed++;
      };
    });
    await sheet.getByRole('button', { name: 'Print' }).click();
    expect(await page.evaluate(() => (globalThis as unknown as { printed: number }).printed)).toBe(1);
    await page.emulateMedia({ media: 'print' });
    expect(await page.getByRole('navigation', { name: 'Main navigation' }).isVisible()).toBe(false);
    expect(await sheet.isVisible()).toBe(true);
    await page.emulateMedia({ media: 'screen' });
    await shot('labs-requisition');
  }, 180_000);

  it('enters the result with a high cholesterol: flagged, the order completed, the trend and previous value shown', async () => {
    await page.goto(url(`/labs/order/${orderId}`));
    const entry = page.getByRole('form', { name: 'Lab result' });
    await entry.getByLabel('Cholesterol, total (mg/dL)').fill('262');
    await entry.getByLabel('Cholesterol, total flag').getByText('H · High').waitFor();
    await entry.getByLabel('Triglycerides (mg/dL)').fill('120');
    await entry.getByLabel('HDL cholesterol (mg/dL)').fill('52');
    await entry.getByLabel('LDL cholesterol (direct) (mg/dL)').fill('170');
    await entry.getByRole('button', { name: 'Save result' }).click();
    await page.waitForURL(/\/labs\/report\/[^/]+$/);
    reportId = new URL(page.url()).pathname.split('/')[3];

    const results = page.getByRole('table', { name: 'Results', exact: true });
    const cholesterol = results.getByRole('row').filter({ hasText: 'Cholesterol, total' });
    await cholesterol.getByText('H · High').waitFor();
    expect((await cholesterol.innerText()).replace(/\s+/g, ' ')).toContain('262 mg/dL');
    await cholesterol.getByText(/^190 mg\/dL/).waitFor();
    await cholesterol.getByText('+72').waitFor();
    await page.getByRole('figure', { name: 'Cholesterol, total chart' }).waitFor();
    expect(await results.getByRole('row').filter({ hasText: 'Triglycerides' }).getByText('H · High').count()).toBe(0);

    const report = await api.readResource('DiagnosticReport', reportId);
    expect(report).toMatchObject({ status: 'final', basedOn: [{ reference: `ServiceRequest/${orderId}` }] });
    expect(report.result).toHaveLength(4);
    const observations = await api.searchResources(
      'Observation',
      { 'based-on': `ServiceRequest/${orderId}` },
      { cache: 'no-cache' },
    );
    const total = observations.find((o) => o.code.coding?.[0]?.code === '2093-3') as Observation;
    expect(total.valueQuantity).toEqual({
      value: 262,
      unit: 'mg/dL',
      system: 'http://unitsofmeasure.org',
      code: 'mg/dL',
    });
    expect(total.interpretation?.[0].coding?.[0]).toMatchObject({ code: 'H', display: 'High' });
    expect(total.referenceRange?.[0].high?.value).toBe(199);
    expect(((await api.readResource('ServiceRequest', orderId)) as ServiceRequest).status).toBe('completed');

    // The patient's Labs tab lists the completed order and the flagged report.
    await page.goto(url(`/Patient/${patientId}/labs`));
    await page.getByRole('table', { name: 'Lab orders' }).getByText('completed').waitFor();
    await page.getByRole('list', { name: 'Lab reports' }).getByText('H · High').waitFor();
    await shot('labs-report');
  }, 120_000);

  it('lists the report in the results inbox with its unread count until it is acknowledged', async () => {
    await page.goto(url('/labs/inbox'));
    const nav = page.getByRole('navigation', { name: 'Main navigation' });
    await nav.getByLabel('1 unreviewed').waitFor();
    const inbox = page.getByRole('list', { name: 'Unreviewed results' });
    const item = inbox.getByRole('listitem', { name: /Lipid panel with direct LDL.* for Ada Lovelace/ });
    await item.getByText('Abnormal').waitFor();
    await item.getByText('Cholesterol, total 262 mg/dL').waitFor();
    // The LDL is high too: two flagged results, nothing critical.
    expect(await item.getByText('H · High').count()).toBe(2);
    expect(await item.getByText('Critical').count()).toBe(0);
    await shot('labs-inbox');
    await item.getByRole('button', { name: 'Acknowledge' }).click();
    await page.getByText('No result awaits your review.').waitFor();
    await nav.getByLabel('1 unreviewed').waitFor({ state: 'detached' });
    const [task] = await api.searchResources('Task', { focus: `DiagnosticReport/${reportId}` }, { cache: 'no-cache' });
    expect((task as Task).status).toBe('completed');
    expect((task as Task).owner?.reference).toMatch(/^Practitioner\//);
    expect((task as Task).executionPeriod?.end).toBeTruthy();
  }, 120_000);

  it('fits a phone, a tablet and a desktop: nothing wider than the window, no serious axe violation', async () => {
    const pages: { name: string; path: string; ready: (p: Page) => Promise<unknown> }[] = [
      {
        name: 'labs-tab',
        path: `/Patient/${patientId}/labs`,
        ready: (p) => p.getByRole('table', { name: 'Lab orders' }).waitFor(),
      },
      {
        name: 'order-new',
        path: `/Patient/${patientId}/labs/new`,
        ready: (p) => p.getByRole('form', { name: 'Lab order' }).waitFor(),
      },
      {
        name: 'order',
        path: `/labs/order/${orderId}`,
        ready: (p) => p.getByRole('region', { name: 'Lab order' }).waitFor(),
      },
      {
        name: 'requisition',
        path: `/labs/order/${orderId}/requisition`,
        ready: (p) => p.getByRole('table', { name: 'Tests' }).waitFor(),
      },
      { name: 'report', path: `/labs/report/${reportId}`, ready: (p) => p.getByRole('figure').first().waitFor() },
      { name: 'inbox', path: '/labs/inbox', ready: (p) => p.getByText('No result awaits your review.').waitFor() },
    ];
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const { name, path, ready } of pages) {
        await page.goto(url(path));
        await ready(page);
        await page.waitForLoadState('networkidle');
        const overflow = await overflowsHorizontally(page);
        if (overflow) problems.push(`${name} at ${width} scrolls sideways: ${JSON.stringify(overflow)}`);
        const violations = await seriousViolations(page);
        if (violations.length) problems.push(`${name} at ${width}:\n${describeViolations(violations)}`);
        await shot(`labs-${name}-${width}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 300_000);
});
