/**
 * Care plans end to end in Chromium against a real server: a PlanDefinition (created by API) applied
 * from the patient's Care plans tab, the CarePlan with its goal and progress chart, its tasks worked
 * in the task list (started and completed, claimed from the team's unassigned ones, cancelled with a
 * reason, and a claim lost to a colleague who got there first), the progress changed accordingly,
 * and the pages fitting a phone, a tablet and a desktop.
 */
import { HearthClient, MemoryStorage, type CarePlan, type Task } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';

describe.runIf(chromiumForSuite())('care plans and tasks in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
  let carePlanId = '';
  let colleague = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true, config: { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD } });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await api.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    const patient = await api.createResource({
      resourceType: 'Patient',
      name: [{ given: ['Grace'], family: 'Hopper' }],
    });
    patientId = patient.id as string;
    const bob = await api.createResource({ resourceType: 'Practitioner', name: [{ given: ['Bob'], family: 'Other' }] });
    colleague = bob.id as string;
    // The signed-in practitioner's care team, owning a task of its own (not part of the plan).
    const me = api.getProfile();
    const team = await api.createResource({
      resourceType: 'CareTeam',
      status: 'active',
      name: 'Diabetes team',
      participant: [{ member: { reference: `Practitioner/${me?.id as string}` } }],
    });
    await api.createResource({
      resourceType: 'Task',
      status: 'requested',
      intent: 'order',
      description: 'Call about results',
      for: { reference: `Patient/${patientId}` },
      owner: { reference: `CareTeam/${team.id as string}` },
    });
    await api.createResource({
      resourceType: 'PlanDefinition',
      status: 'active',
      url: 'http://example.org/PlanDefinition/diabetes-e2e',
      version: '1',
      title: 'Diabetes follow-up',
      goal: [
        {
          description: { text: 'HbA1c below 7%' },
          target: [
            {
              measure: { text: 'HbA1c' },
              detailQuantity: { comparator: '<', value: 7, unit: '%' },
              due: { value: 3, code: 'mo', system: 'http://unitsofmeasure.org' },
            },
          ],
        },
      ],
      action: [
        {
          title: 'HbA1c test',
          timingDuration: { value: 1, code: 'wk', system: 'http://unitsofmeasure.org' },
          participant: [{ type: 'practitioner' }],
        },
        {
          title: 'Foot care',
          action: [
            { title: 'Foot exam', timingDuration: { value: 2, code: 'wk', system: 'http://unitsofmeasure.org' } },
            {
              title: 'Retinal screening',
              timingDuration: { value: 3, code: 'wk', system: 'http://unitsofmeasure.org' },
            },
          ],
        },
      ],
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("applies a plan from the patient's Care plans tab and shows it with its goal and chart", async () => {
    await page.goto(url(`/Patient/${patientId}/careplans`));
    await page.getByText('No care plan yet.').waitFor();
    const form = page.getByRole('form', { name: 'Apply a plan' });
    await form.getByRole('textbox', { name: 'Plan definition' }).fill('Diabetes');
    await page.getByRole('option', { name: 'Diabetes follow-up (v1)' }).click();
    await form.getByRole('button', { name: 'Apply plan' }).click();
    await page.waitForURL(/\/CarePlan\/[^/]+$/);
    carePlanId = new URL(page.url()).pathname.split('/')[2];
    const plan = (await api.readResource('CarePlan', carePlanId)) as CarePlan;
    expect(plan.activity?.[0]?.reference?.reference).toMatch(/^RequestGroup\//);
    await page
      .getByRole('listitem', { name: 'HbA1c below 7%' })
      .getByText(/^Target: HbA1c < 7%, by /)
      .waitFor();
    const figure = page.getByRole('figure', { name: 'Activity progress chart' });
    await figure.getByRole('status').getByText('0 of 3 activities completed (0%)').waitFor();
    expect(await figure.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    const activities = page.getByRole('region', { name: 'Activities' });
    for (const name of ['HbA1c test', 'Foot exam', 'Retinal screening']) {
      await activities.getByRole('listitem', { name }).getByLabel('Status requested').waitFor();
    }
    await page.screenshot({ path: `${screenshotDir}/careplans-applied.png`, fullPage: true });
    await page.goto(url(`/Patient/${patientId}/careplans`));
    await page.getByRole('listitem', { name: 'Diabetes follow-up' }).getByText('0 of 3 activities done').waitFor();
  }, 180_000);

  it('works the tasks in the task list: start and complete, claim, cancel, and a claim lost to a colleague', async () => {
    await page.goto(url('/'));
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    const list = page.getByRole('list', { name: 'Tasks' });
    const hba1c = list.getByRole('listitem', { name: 'HbA1c test' });
    await hba1c.getByRole('button', { name: 'Start' }).click();
    await hba1c.getByLabel('Status in-progress').waitFor();
    await hba1c.getByRole('button', { name: 'Complete' }).click();
    await hba1c.waitFor({ state: 'detached' });

    await page.getByText("My team's tasks").click();
    await page.getByText('Teams: Diabetes team, and unassigned tasks').waitFor();
    await list.getByRole('listitem', { name: 'Retinal screening' }).waitFor();
    // Earliest due first, the team's undated task last.
    expect(
      await list.getByRole('listitem').evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label'))),
    ).toEqual(['Foot exam', 'Retinal screening', 'Call about results']);
    const foot = list.getByRole('listitem', { name: 'Foot exam' });
    await foot.getByText('unassigned').waitFor();
    await foot.getByRole('button', { name: 'Claim' }).click();
    await foot.waitFor({ state: 'detached' });

    // A colleague claims the retinal screening while it is on this screen; our claim then loses.
    const planTasks = (await api.searchResources(
      'Task',
      { 'based-on': `CarePlan/${carePlanId}` },
      { cache: 'no-cache' },
    )) as Task[];
    const retinal = planTasks.find((t) => t.description === 'Retinal screening') as Task;
    expect(retinal.owner).toBeUndefined();
    await api.updateResource(
      { ...retinal, status: 'accepted', owner: { reference: `Practitioner/${colleague}`, display: 'Dr Bob Other' } },
      { ifMatch: retinal.meta?.versionId },
    );
    await list.getByRole('listitem', { name: 'Retinal screening' }).getByRole('button', { name: 'Claim' }).click();
    await page
      .getByRole('alert')
      .getByText(
        'Someone else changed this task first: it is now accepted, owned by Dr Bob Other. The list shows it as it is now.',
      )
      .waitFor();
    await list.getByRole('listitem', { name: 'Retinal screening' }).waitFor({ state: 'detached' });
    await list.getByRole('listitem', { name: 'Call about results' }).waitFor();
    const stillBobs = (await api.readResource('Task', retinal.id as string)) as Task;
    expect(stillBobs.owner?.reference).toBe(`Practitioner/${colleague}`);

    await page.getByText('My tasks').click();
    const claimed = list.getByRole('listitem', { name: 'Foot exam' });
    await claimed.getByLabel('Status accepted').waitFor();
    await claimed.getByRole('button', { name: 'Cancel task' }).click();
    await claimed.getByRole('textbox', { name: 'Reason for cancelling' }).fill('Seen by podiatry last week');
    await claimed.getByRole('button', { name: 'Confirm cancel' }).click();
    await claimed.waitFor({ state: 'detached' });
    await page.screenshot({ path: `${screenshotDir}/careplans-tasks.png`, fullPage: true });

    const tasks = (await api.searchResources(
      'Task',
      { 'based-on': `CarePlan/${carePlanId}`, _sort: 'authored-on' },
      { cache: 'no-cache' },
    )) as Task[];
    const byName = new Map(tasks.map((t) => [t.description, t]));
    expect(byName.get('HbA1c test')).toMatchObject({
      status: 'completed',
      executionPeriod: { end: expect.any(String) },
    });
    expect(byName.get('Foot exam')).toMatchObject({
      status: 'cancelled',
      statusReason: { text: 'Seen by podiatry last week' },
      owner: { reference: expect.stringMatching(/^Practitioner\//) },
    });
  }, 180_000);

  it('shows the progress changed on the plan page', async () => {
    await page.goto(url(`/CarePlan/${carePlanId}`));
    const figure = page.getByRole('figure', { name: 'Activity progress chart' });
    await figure.getByRole('status').getByText('1 of 2 activities completed (50%), 1 cancelled').waitFor();
    await figure.getByRole('progressbar', { name: 'Plan progress 50%' }).waitFor();
    const activities = page.getByRole('region', { name: 'Activities' });
    await activities.getByRole('listitem', { name: 'HbA1c test' }).getByLabel('Status completed').waitFor();
    await activities
      .getByRole('listitem', { name: 'Foot exam' })
      .getByText('Reason: Seen by podiatry last week')
      .waitFor();
    await page.screenshot({ path: `${screenshotDir}/careplans-progress.png`, fullPage: true });
  }, 120_000);

  it('fits a phone, a tablet and a desktop', async () => {
    const problems: string[] = [];
    const pages: { name: string; path: string; ready: (p: Page) => Promise<void> }[] = [
      {
        name: 'patient',
        path: `/Patient/${patientId}/careplans`,
        ready: (p) =>
          p.getByRole('listitem', { name: 'Diabetes follow-up' }).getByText('1 of 2 activities done').waitFor(),
      },
      {
        name: 'plan',
        path: `/CarePlan/${carePlanId}`,
        ready: (p) =>
          p
            .getByRole('figure', { name: 'Activity progress chart' })
            .locator('.recharts-bar-rectangle')
            .first()
            .waitFor(),
      },
      {
        name: 'tasks',
        path: '/tasks',
        // The team's list, which still has a task (its card and actions are what must fit).
        ready: async (p) => {
          await p.getByText('No task matches.').waitFor();
          await p.getByText("My team's tasks").click();
          await p
            .getByRole('listitem', { name: 'Call about results' })
            .getByRole('button', { name: 'Claim' })
            .waitFor();
        },
      },
    ];
    for (const width of [390, 820, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      for (const { name, path, ready } of pages) {
        await page.goto(url(path));
        await ready(page);
        await page.waitForLoadState('networkidle');
        const overflow = await overflowsHorizontally(page);
        if (overflow) problems.push(`${name} at ${width} scrolls sideways: ${JSON.stringify(overflow)}`);
        const violations = await seriousViolations(page);
        if (violations.length) problems.push(`${name} at ${width}:\n${describeViolations(violations)}`);
        await page.screenshot({ path: `${screenshotDir}/careplans-${name}-${width}.png`, fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 300_000);
});
