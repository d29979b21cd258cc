/**
 * The app's first hour in Chromium against a real server: a user with two projects picks one by
 * its name (keyboard only, on a phone), lands on the home page, creates a patient from the form;
 * then sign-in, project choice, the patient list, a chart, a generated form and the admin pages
 * at 375, 768 and 1280 px: no sideways scrolling, and no serious or critical axe-core violation.
 */
import { HearthClient, MemoryStorage } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findDocsBuild } from '../../server/src/docs-static/plugin.js';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import type { PageWindow } from './browser-globals.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const DANA_EMAIL = 'dana@example.com';
const DANA_PASSWORD = 'two-projects-2024!';
const WIDTHS = [375, 768, 1280];

describe.runIf(chromiumForSuite())('the first hour in the web app', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();
  const shot = (name: string) => page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });

  /** What is wrong with the page as drawn: sideways scrolling, serious or critical axe violations. */
  async function problemsOf(name: string): Promise<string[]> {
    // Let what the page fetched settle (charts, names of references).
    await page.waitForLoadState('networkidle');
    const overflow = await overflowsHorizontally(page);
    const violations = await seriousViolations(page);
    await shot(name);
    return [
      ...(overflow ? [`${name} scrolls sideways: ${JSON.stringify(overflow)}`] : []),
      ...(violations.length ? [`${name}:\n${describeViolations(violations)}`] : []),
    ];
  }

  /** The page fits the window's width and axe finds nothing serious on it. */
  async function checkPage(name: string): Promise<void> {
    expect(await problemsOf(name)).toEqual([]);
  }

  /** A new server user with two projects of their own, made through the registration API. */
  async function registerWithTwoProjects(): Promise<void> {
    const anonymous = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    const post = (path: string, body: object) =>
      anonymous.post<{ login: string; code?: string }>(path, body, 'application/json', { noAuth: true });
    const { login } = await post('auth/newuser', {
      firstName: 'Dana',
      lastName: 'Scully',
      email: DANA_EMAIL,
      password: DANA_PASSWORD,
    });
    await post('auth/newproject', { login, projectName: 'Riverside Clinic' });
    const again = await anonymous.startLogin({ email: DANA_EMAIL, password: DANA_PASSWORD });
    await post('auth/newproject', { login: again.login, projectName: 'Hilltop Lab' });
  }

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true, config: { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD } });
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await api.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await registerWithTwoProjects();
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 375, height: 800 } });
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  }, 300_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page) {
      await shot(`failed-first-hour-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('a user with two projects signs in on a phone with the keyboard alone and picks one by its name', async () => {
    await page.goto(url('/signin'));
    await page.getByLabel('Email').waitFor();
    await checkPage('first-hour-signin-375');
    // The email field has the focus; Tab moves on, Enter signs in.
    await page.keyboard.type(DANA_EMAIL);
    await page.keyboard.press('Tab');
    await page.keyboard.type(DANA_PASSWORD);
    await page.keyboard.press('Enter');
    const riverside = page.getByRole('radio', { name: /^Riverside Clinic/ });
    const hilltop = page.getByRole('radio', { name: /^Hilltop Lab/ });
    await riverside.waitFor();
    await hilltop.waitFor();
    // Names, not ids.
    expect(await page.getByText(/Project\//).count()).toBe(0);
    await checkPage('first-hour-project-choice-375');
    // The first project is chosen; the arrow key moves the choice to the other one.
    await riverside.focus();
    expect(await riverside.isChecked()).toBe(true);
    await page.keyboard.press('ArrowDown');
    expect(await hilltop.isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as PageWindow).document.activeElement?.textContent))
      .toBe('Continue');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Welcome, Dana Scully' }).waitFor();
    await page.getByText('Project Hilltop Lab').waitFor();
    await page.getByRole('table', { name: 'Resource counts' }).waitFor();
    await page.getByText('No patients yet').waitFor();
    expect(await page.getByRole('link', { name: 'Getting started' }).getAttribute('href')).toBe(
      '/docs/getting-started',
    );
    await checkPage('first-hour-home-375');
  }, 180_000);

  it('creates the first patient from the home page with the keyboard, the name first', async () => {
    const create = page.getByRole('link', { name: 'Create patient' });
    await create.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/Patient\/new$/);
    const form = page.getByRole('form', { name: 'Patient form' });
    await form.getByRole('textbox', { name: 'Given' }).waitFor();
    // The first field of the form is the given name.
    await form.getByRole('textbox', { name: 'Given' }).focus();
    const firstTextbox = await form.getByRole('textbox').first().getAttribute('id');
    expect(firstTextbox).toBe(await form.getByRole('textbox', { name: 'Given' }).getAttribute('id'));
    await page.keyboard.type('Fox');
    await form.getByLabel('Family').focus();
    await page.keyboard.type('Mulder');
    // A native date input: typed in the browser's (en-US) order, month, day, year.
    await form.getByLabel('Birth date').focus();
    await page.keyboard.type('10131961');
    await checkPage('first-hour-patient-form-375');
    await form.getByRole('button', { name: 'Create' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/Patient\/(?!new)[^/]+$/);
    const created = await api.readResource('Patient', new URL(page.url()).pathname.split('/')[2]);
    expect(created.name?.[0]).toMatchObject({ given: ['Fox'], family: 'Mulder' });
    expect(created.birthDate).toBe('1961-10-13');
    // Back home, the patient is among the recent ones.
    await page.goto(url('/'));
    await page.getByRole('link', { name: 'Fox Mulder' }).waitFor();
  }, 180_000);

  it("the home page's guide links lead to the guides, or say how to build them, never to an error", async () => {
    await page.goto(url('/'));
    await page.getByRole('link', { name: 'Getting started' }).click();
    await page.waitForURL(/\/docs\/getting-started$/);
    if (findDocsBuild()) {
      // `npm run docs` has built the site here: the server serves the guide itself.
      await page
        .getByRole('heading', { name: /getting started/i })
        .first()
        .waitFor();
    } else {
      await page.getByRole('heading', { name: 'The guides are not built on this server' }).waitFor();
      await page.getByText('npm run docs').first().waitFor();
      await page.getByText('docs/getting-started.md').waitFor();
      expect(await page.getByText(/Unknown resource type/).count()).toBe(0);
      await checkPage('first-hour-guides-not-built-375');
      await page.getByRole('link', { name: 'Home' }).click();
      await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    }
  }, 60_000);

  it('the super admin sees owners by name and the database statistics as a chart and tables', async () => {
    await page.context().clearCookies();
    await page.evaluate(() => (globalThis as unknown as PageWindow).localStorage.clear());
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    await page.goto(url('/admin/super'));
    const projects = page.getByRole('table', { name: 'Projects' });
    const riverside = projects.getByRole('row').filter({ hasText: 'Riverside Clinic' });
    await riverside.getByText('Dana Scully').waitFor();
    expect(await riverside.getByText(/^User\//).count()).toBe(0);
    await page
      .getByRole('figure', { name: 'Resources per type, chart' })
      .locator('.recharts-bar-rectangle')
      .first()
      .waitFor();
    const types = page.getByRole('table', { name: 'Resources per type' });
    await types.getByRole('row').filter({ hasText: 'Project' }).first().waitFor();
    await page.getByRole('table', { name: 'Migrations' }).waitFor();
  }, 180_000);

  it('every page is usable at 375, 768 and 1280 px, with no serious accessibility violation', async () => {
    const patient = await api.createResource({
      resourceType: 'Patient',
      name: [{ given: ['Ada'], family: 'Lovelace' }],
      birthDate: '1815-12-10',
      gender: 'female',
    });
    patientId = patient.id as string;
    for (const [day, value] of [
      ['2024-01-01', 72],
      ['2024-02-01', 88],
    ] as const) {
      await api.createResource({
        resourceType: 'Observation',
        status: 'final',
        category: [
          { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] },
        ],
        code: { coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }], text: 'Heart rate' },
        subject: { reference: `Patient/${patientId}` },
        effectiveDateTime: `${day}T09:00:00Z`,
        valueQuantity: { value, unit: 'beats/minute', system: 'http://unitsofmeasure.org', code: '/min' },
      });
    }
    const pages: { name: string; path: string; ready: (p: Page) => Promise<unknown> }[] = [
      { name: 'home', path: '/', ready: (p) => p.getByRole('table', { name: 'Resource counts' }).waitFor() },
      {
        name: 'patient-list',
        path: '/Patient',
        ready: (p) => p.getByRole('table', { name: 'Patient search results' }).getByText('Ada Lovelace').waitFor(),
      },
      {
        name: 'chart',
        path: `/Patient/${patientId}`,
        ready: (p) => p.getByRole('figure', { name: 'Heart rate chart' }).locator('.recharts-line-curve').waitFor(),
      },
      {
        name: 'observation-list',
        path: '/Observation',
        // The subject column names the patient, not Patient/<id>.
        ready: (p) =>
          p.getByRole('table', { name: 'Observation search results' }).getByText('Ada Lovelace').first().waitFor(),
      },
      { name: 'form', path: '/Patient/new', ready: (p) => p.getByRole('form', { name: 'Patient form' }).waitFor() },
      {
        name: 'project-admin',
        path: '/admin/project',
        ready: (p) => p.getByRole('table', { name: 'Project details' }).waitFor(),
      },
      {
        name: 'admin-users',
        path: '/admin/users',
        ready: (p) => p.getByRole('table', { name: 'Project members' }).waitFor(),
      },
      {
        name: 'super-admin',
        path: '/admin/super',
        ready: (p) => p.getByRole('table', { name: 'Resources per type' }).waitFor(),
      },
    ];
    // Every page at every width is checked before the test fails, so that one run lists all there is to fix.
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const { name, path, ready } of pages) {
        await page.goto(url(path));
        await ready(page);
        problems.push(...(await problemsOf(`first-hour-${name}-${width}`)));
      }
      // The navigation is reachable at every width (behind the menu button on narrow screens).
      const toggle = page.getByRole('button', { name: 'Toggle navigation' });
      if (await toggle.isVisible()) {
        await toggle.focus();
        await page.keyboard.press('Enter');
      }
      await page
        .getByRole('navigation', { name: 'Main navigation' })
        .getByRole('link', { name: 'Observation' })
        .click();
      await page.waitForURL(/\/Observation/);
    }
    expect(problems).toEqual([]);
  }, 600_000);
});
