/**
 * The web app end to end in Chromium against a real server: sign in, create a Patient through the
 * generated form, find it with SearchControl filters, edit it, see the history diff, fill in a
 * questionnaire, see a vitals chart, invite a user, edit and remove a member, create a client,
 * write and execute a bot, see a subscription's deliveries, register. Screenshots of the main screens go to artifacts/screenshots/.
 */
import { HearthClient, MemoryStorage, type Resource } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';
import { freshTotp } from '../../server/src/test/totp.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const USER_EMAIL = 'rosalind@example.com';

describe.runIf(chromiumForSuite())('web app in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();
  /** Opens the account menu (unless it is open) and signs out. */
  async function signOut(): Promise<void> {
    const item = page.getByRole('menuitem', { name: 'Sign out' });
    // A menu closed just before (Escape) is still fading out: wait until it is gone, then open it afresh.
    await item.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Account menu' }).click();
    await item.click();
    await page.waitForURL(/\/signin/);
  }
  const shot = (name: string) => page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true, config: { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD } });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(30_000);
    // Script errors in the page show in the test output.
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await api.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  }, 300_000);

  afterEach(async (ctx) => {
    // A failed flow leaves a picture of where it stopped.
    if (ctx.task.result?.state === 'fail' && page) {
      await shot(`failed-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in with email and password', async () => {
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await shot('signin');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in, the home page says what to do first.
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    await page.getByRole('link', { name: 'Create patient' }).waitFor();
  }, 120_000);

  it('creates a Patient through the generated form', async () => {
    await page.goto(url('/Patient/new'));
    const form = page.getByRole('form', { name: 'Patient form' });
    // The name comes first, open, given names before the family name.
    await form.getByRole('textbox', { name: 'Given' }).fill('Ada');
    await form.getByLabel('Family').fill('Zebrafish');
    await form.getByLabel('Birth date').fill('1984-05-06');
    await form.getByRole('textbox', { name: 'Gender' }).click();
    await page.getByRole('option', { name: 'female' }).click();
    await shot('patient-new');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/Patient\/(?!new)[^/]+$/);
    patientId = new URL(page.url()).pathname.split('/')[2];
    const stored = await api.readResource('Patient', patientId);
    expect(stored.name?.[0]).toMatchObject({ family: 'Zebrafish', given: ['Ada'] });
    expect(stored.gender).toBe('female');
    expect(stored.birthDate).toBe('1984-05-06');
  }, 120_000);

  it('finds the Patient with SearchControl filters, the state in the URL', async () => {
    await api.createResource({ resourceType: 'Patient', name: [{ family: 'Aardvark' }] });
    await page.goto(url('/Patient'));
    await page.getByRole('button', { name: /^Filters/ }).click();
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Filter 1 value').fill('Zebra');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/name=Zebra/);
    const table = page.getByRole('table', { name: 'Patient search results' });
    await table.getByRole('row', { name: `Patient ${patientId}` }).waitFor();
    await table.getByText('Aardvark').waitFor({ state: 'detached' });
    await shot('patient-search');
    // A reload keeps the search (it lives in the query string).
    await page.reload();
    // Rows open with the keyboard.
    const row = page.getByRole('row', { name: `Patient ${patientId}` });
    await row.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/Patient/${patientId}`));
  }, 120_000);

  it('sorts, pages, and deletes selected rows in bulk', async () => {
    for (const given of ['Ann', 'Bea', 'Cy']) {
      // Distinct names, so that the order by name is certain.
      await api.createResource({ resourceType: 'Patient', name: [{ family: `Bulkdrop${given}`, given: [given] }] });
    }
    await page.goto(url('/Patient?name=Bulkdrop&_count=2'));
    const table = page.getByRole('table', { name: 'Patient search results' });
    await page.getByText('1–2 of 3').waitFor();
    await table.getByRole('button', { name: 'Column name' }).click();
    await page.getByRole('menuitem', { name: 'Sort descending' }).click();
    await page.waitForURL(/_sort=-name/);
    // The router renders a navigation as a transition, after the URL changes: wait for the sorted view.
    await table.getByText('name ↓').waitFor();
    await table.getByText('Cy BulkdropCy').waitFor();
    await page.getByRole('button', { name: 'Page 2' }).click();
    await page.waitForURL(/_offset=2/);
    expect(page.url()).toContain('_sort=-name');
    await page.getByText('3–3 of 3').waitFor();
    await table.getByText('Ann BulkdropAnn').waitFor();
    expect(await page.getByRole('textbox', { name: 'Page size' }).inputValue()).toBe('2');
    // Back to the first page, select both rows, delete them after confirming.
    await page.getByRole('button', { name: 'Page 1' }).click();
    await table.getByText('Cy BulkdropCy').waitFor();
    await table.getByRole('checkbox', { name: 'Select all' }).check();
    await page.getByRole('button', { name: 'Delete 2 selected' }).click();
    await page.getByRole('dialog', { name: 'Delete 2 Patient?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('1–1 of 1').waitFor();
    await table.getByText('Ann BulkdropAnn').waitFor();
    expect((await api.searchResources('Patient', { name: 'Bulkdrop' }, { cache: 'no-cache' })).length).toBe(1);
    await shot('patient-search-bulk-delete');
  }, 120_000);

  it('runs a query in GraphiQL, bundled with the app', async () => {
    // Everything the page loads comes from this server (no CDN): it works offline.
    const foreign: string[] = [];
    const watch = (request: { url(): string }) => {
      if (!request.url().startsWith(server.baseUrl) && !request.url().startsWith('data:')) foreign.push(request.url());
    };
    page.on('request', watch);
    const query = '{ PatientList(name: "Zebrafish") { id name { family } } }';
    await page.goto(url(`/graphiql?query=${encodeURIComponent(query)}`));
    // GraphiQL creates its editors after loading CodeMirror; a click before both exist runs nothing.
    // GraphiQL is the app's largest chunk: on a busy machine it takes a while to load and start.
    await page.locator('.graphiql-query-editor .CodeMirror', { hasText: 'Zebrafish' }).waitFor({ timeout: 90_000 });
    await page.locator('.graphiql-response .CodeMirror').waitFor();
    await page.getByRole('button', { name: /^Execute query/ }).click();
    await page.locator('.graphiql-response', { hasText: patientId }).waitFor();
    await shot('graphiql');
    page.off('request', watch);
    expect(foreign).toEqual([]);
  }, 180_000);

  it('edits the Patient and shows the history diff', async () => {
    await page.goto(url(`/Patient/${patientId}/edit`));
    const family = page.getByRole('form', { name: 'Patient form' }).getByLabel('Family');
    await family.fill('Zebrafish-Jones');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved version' }).waitFor();
    expect((await api.readResource('Patient', patientId, { cache: 'no-cache' })).name?.[0]?.family).toBe(
      'Zebrafish-Jones',
    );
    await page.getByRole('tab', { name: 'History' }).click();
    const diff = page.getByRole('region', { name: 'Diff' });
    await diff.locator('[data-diff="added"]', { hasText: 'Zebrafish-Jones' }).waitFor();
    await diff.locator('[data-diff="removed"]', { hasText: '"Zebrafish"' }).waitFor();
    await shot('patient-history-diff');
    // Blame: the changed line belongs to version 2, the unchanged birth date to version 1.
    await page.getByRole('tab', { name: 'Blame' }).click();
    const blame = page.getByRole('table', { name: 'Blame' });
    await blame.getByRole('row', { name: /v2 .*Zebrafish-Jones/ }).waitFor();
    await blame.getByRole('row').filter({ hasText: '"birthDate"' }).waitFor();
    expect(await blame.getByRole('row', { name: /^v1 / }).count()).toBeGreaterThan(0);
    // JSON: edited as text and saved.
    await page.getByRole('tab', { name: 'JSON' }).click();
    const json = page.getByLabel('Resource JSON');
    const text = JSON.parse(await json.inputValue()) as Resource;
    await json.fill(JSON.stringify({ ...text, active: true }, null, 2));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved version 3' }).waitFor();
    expect((await api.readResource('Patient', patientId, { cache: 'no-cache' })).active).toBe(true);
  }, 120_000);

  it('creates a Condition: a reference typed ahead, a concept looked up with $expand', async () => {
    await page.goto(url('/Condition/new'));
    const form = page.getByRole('form', { name: 'Condition form' });
    await form.getByRole('textbox', { name: 'Subject', exact: true }).fill('Zebra');
    await page.getByRole('option', { name: /Zebrafish-Jones/ }).click();
    await form.getByLabel('Clinical status').fill('act');
    await page.getByRole('option', { name: 'Active (active)' }).click();
    await form.getByLabel('Code text').fill('Asthma');
    await shot('condition-new');
    await form.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/\/Condition\/(?!new)[^/]+$/);
    const stored = await api.readResource('Condition', new URL(page.url()).pathname.split('/')[2]);
    expect(stored.subject?.reference).toBe(`Patient/${patientId}`);
    expect(stored.clinicalStatus?.coding?.[0]).toMatchObject({
      system: 'http://terminology.hl7.org/CodeSystem/condition-clinical',
      code: 'active',
    });
    expect(stored.code?.text).toBe('Asthma');
  }, 120_000);

  it('uploads a photo as a Binary from the generated form', async () => {
    await page.goto(url(`/Patient/${patientId}/edit`));
    const form = page.getByRole('form', { name: 'Patient form' });
    await form.getByRole('button', { name: 'Add photo' }).click();
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    await form.locator('input[type="file"]').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
    await form.getByRole('button', { name: 'photo.png' }).waitFor();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved version' }).waitFor();
    const stored = await api.readResource('Patient', patientId, { cache: 'no-cache' });
    const photo = stored.photo?.[0];
    expect(photo).toMatchObject({ contentType: 'image/png', title: 'photo.png' });
    const blob = await api.download(photo?.url as string);
    expect(Buffer.from(await blob.arrayBuffer())).toEqual(png);
  }, 120_000);

  it("shows the server's validation messages at the fields they concern", async () => {
    await page.goto(url('/Observation/new'));
    const form = page.getByRole('form', { name: 'Observation form' });
    await form.getByRole('button', { name: 'Create' }).click();
    await form.getByText('Missing required element "status"').first().waitFor();
    expect(await form.getByRole('textbox', { name: 'Status' }).getAttribute('aria-invalid')).toBe('true');
    await shot('observation-validation');
    // Fixing it saves.
    await form.getByRole('textbox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'final' }).click();
    await form.getByRole('button', { name: 'Create' }).click();
    const outcome = await Promise.race([
      page.waitForURL(/\/Observation\/(?!new)[^/]+$/).then(() => 'created'),
      form
        .getByText(/Missing required element "code"/)
        .first()
        .waitFor()
        .then(() => 'code required'),
    ]);
    expect(['created', 'code required']).toContain(outcome);
  }, 120_000);

  it('renders a questionnaire with enableWhen and submits a QuestionnaireResponse', async () => {
    const questionnaire = (await api.createResource({
      resourceType: 'Questionnaire',
      status: 'active',
      title: 'Intake',
      item: [
        { linkId: 'smoker', text: 'Do you smoke?', type: 'boolean' },
        {
          linkId: 'packs',
          text: 'Packs per day',
          type: 'integer',
          enableWhen: [{ question: 'smoker', operator: '=', answerBoolean: true }],
        },
        {
          linkId: 'mood',
          text: 'Mood',
          type: 'choice',
          answerOption: [
            { valueCoding: { code: 'good', display: 'Good' } },
            { valueCoding: { code: 'bad', display: 'Bad' } },
          ],
        },
      ],
    })) as Resource;
    await page.goto(url(`/Questionnaire/${questionnaire.id}/preview`));
    await page.getByLabel('Do you smoke?').waitFor();
    expect(await page.getByLabel('Packs per day').count()).toBe(0);
    // About the patient created above.
    await page.getByRole('textbox', { name: 'Subject' }).fill('Zebra');
    await page.getByRole('option', { name: /Zebrafish-Jones/ }).click();
    await page.getByLabel('Do you smoke?').check();
    await page.getByLabel('Packs per day').fill('2');
    await page.getByLabel('Good').check();
    await shot('questionnaire');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Response saved').waitFor();
    const [response] = await api.searchResources('QuestionnaireResponse', {
      questionnaire: `Questionnaire/${questionnaire.id}`,
    });
    const responses = response ? [response] : await api.searchResources('QuestionnaireResponse', {});
    expect(responses[0]?.subject?.reference).toBe(`Patient/${patientId}`);
    expect(responses[0]?.item).toEqual([
      { linkId: 'smoker', text: 'Do you smoke?', answer: [{ valueBoolean: true }] },
      { linkId: 'packs', text: 'Packs per day', answer: [{ valueInteger: 2 }] },
      { linkId: 'mood', text: 'Mood', answer: [{ valueCoding: { code: 'good', display: 'Good' } }] },
    ]);
  }, 120_000);

  it('builds a questionnaire in the builder and fills it in', async () => {
    await page.goto(url('/Questionnaire/new'));
    await page.getByLabel('Title').fill('Allergy check');
    await page.getByRole('button', { name: 'Add item' }).click();
    await page.getByLabel('Text').fill('Any allergies?');
    await page.getByRole('textbox', { name: 'Type', exact: true }).click();
    await page.getByRole('option', { name: 'boolean', exact: true }).click();
    await page.getByRole('button', { name: 'Save questionnaire' }).click();
    await page.waitForURL(/\/Questionnaire\/(?!new)[^/]+$/);
    await page.getByRole('tab', { name: 'Fill in' }).waitFor();
    await page.getByLabel('Any allergies?').check();
    await shot('questionnaire-builder-fill');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Response saved').waitFor();
  }, 120_000);

  it('shows vital sign trends on the patient chart', async () => {
    const code = {
      coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }],
      text: 'Heart rate',
    };
    for (const [day, value] of [
      ['2024-01-01', 72],
      ['2024-02-01', 88],
      ['2024-03-01', 64],
    ] as const) {
      await api.createResource({
        resourceType: 'Observation',
        status: 'final',
        category: [
          { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] },
        ],
        code,
        subject: { reference: `Patient/${patientId}` },
        effectiveDateTime: `${day}T09:00:00Z`,
        valueQuantity: { value, unit: 'beats/minute', system: 'http://unitsofmeasure.org', code: '/min' },
        referenceRange: [{ low: { value: 60 }, high: { value: 100 } }],
      });
    }
    await page.goto(url(`/Patient/${patientId}`));
    const chart = page.getByRole('figure', { name: 'Heart rate chart' });
    await chart.waitFor();
    await chart.locator('.recharts-line-curve').waitFor();
    expect(await chart.locator('.recharts-line-dot').count()).toBe(3);
    expect(await chart.locator('.recharts-reference-area').count()).toBe(1);
    await chart.getByText('Latest: Heart rate: 64 beats/minute').waitFor();
    // The rest of the summary: the Condition created above, a medication, an allergy, encounters.
    const subject = { reference: `Patient/${patientId}` };
    await api.createResource({
      resourceType: 'MedicationRequest',
      status: 'active',
      intent: 'order',
      subject,
      medicationCodeableConcept: { text: 'Salbutamol inhaler' },
    });
    await api.createResource({
      resourceType: 'AllergyIntolerance',
      patient: subject,
      code: { text: 'Peanuts' },
      // ait-1: a clinical status unless the record was entered in error.
      clinicalStatus: {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }],
      },
    });
    await api.createResource({
      resourceType: 'Encounter',
      status: 'finished',
      class: { code: 'AMB' },
      type: [{ text: 'Asthma review' }],
      subject,
      period: { start: '2024-03-01T09:00:00Z' },
    });
    // Lab values trend too, with their own units and reference range.
    for (const [day, value] of [
      ['2024-01-15', 6.1],
      ['2024-04-15', 5.6],
    ] as const) {
      await api.createResource({
        resourceType: 'Observation',
        status: 'final',
        category: [
          { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] },
        ],
        code: { coding: [{ system: 'http://loinc.org', code: '4548-4' }], text: 'HbA1c' },
        subject,
        effectiveDateTime: `${day}T08:00:00Z`,
        valueQuantity: { value, unit: '%', system: 'http://unitsofmeasure.org', code: '%' },
        referenceRange: [{ low: { value: 4 }, high: { value: 5.6 } }],
      });
    }
    await page.reload();
    await page.getByRole('region', { name: 'Patient header' }).getByText('Zebrafish-Jones').waitFor();
    const labs = page.getByRole('figure', { name: 'HbA1c chart' });
    await labs.getByText(/Latest: HbA1c: 5\.6 ?%/).waitFor();
    expect(await labs.locator('.recharts-line-dot').count()).toBe(2);
    expect(await labs.locator('.recharts-reference-area').count()).toBe(1);
    await page.getByLabel('Problems').getByText('Asthma').waitFor();
    await page.getByLabel('Medications').getByText('Salbutamol inhaler').waitFor();
    await page.getByLabel('Allergies').getByText('Peanuts').waitFor();
    const encounters = page.getByLabel('Encounters');
    await encounters.getByText('Asthma review').waitFor();
    await shot('patient-chart');
    // Timeline items open with the keyboard, an encounter on its charting page.
    await encounters.getByRole('button', { name: /Asthma review/ }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/Patient/${patientId}/encounter/[^/]+$`));
  }, 120_000);

  it('invites a user', async () => {
    await page.goto(url('/admin/project'));
    await page.getByRole('table', { name: 'Project details' }).getByText('Super Admin').waitFor();
    await page.getByRole('tab', { name: 'Users' }).click();
    await page.waitForURL(/\/admin\/users$/);
    await page.getByRole('table', { name: 'Project members' }).waitFor();
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.getByRole('textbox', { name: /^Email/ }).fill('grace@example.com');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Invited Grace Hopper' }).waitFor();
    await page
      .getByRole('table', { name: 'Project members' })
      .getByRole('row')
      .filter({ hasText: 'Grace Hopper' })
      .getByText('Invitation pending')
      .waitFor();
    await shot('admin-users');
  }, 120_000);

  it('edits a member to admin with a display name, refuses removing oneself, and removes a member', async () => {
    const members = page.getByRole('table', { name: 'Project members' });
    await members.getByRole('button', { name: 'Edit Grace Hopper' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit member: Grace Hopper' });
    await edit.getByLabel('Project admin').check();
    await edit.getByLabel(/^Display name/).fill('Rear Admiral Hopper');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    const grace = members.getByRole('row').filter({ hasText: 'Rear Admiral Hopper' });
    await grace.getByText('Admin', { exact: true }).waitFor();
    await shot('admin-users-edited');

    // The server keeps the signed-in admin's own membership (here also the owner's); its reason shows.
    const own = members.getByRole('row').filter({ has: page.getByText('You', { exact: true }) });
    await own.getByRole('button', { name: /^Remove / }).click();
    const confirmOwn = page.getByRole('dialog', { name: 'Remove member' });
    await confirmOwn.getByRole('button', { name: 'Remove', exact: true }).click();
    await confirmOwn
      .getByRole('alert')
      .getByText(/cannot be removed|your own membership/)
      .waitFor();
    await confirmOwn.getByRole('button', { name: 'Cancel' }).click();
    await confirmOwn.waitFor({ state: 'detached' });

    await grace.getByRole('button', { name: 'Remove Rear Admiral Hopper' }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove member' });
    await confirm.getByText('Remove Rear Admiral Hopper from this project?').waitFor();
    await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
    await confirm.waitFor({ state: 'detached' });
    await grace.waitFor({ state: 'detached' });
    expect(await members.getByRole('row').filter({ hasText: 'grace@example.com' }).count()).toBe(0);
    expect(await own.count()).toBe(1);
  }, 120_000);

  it('creates a client and shows its secret once', async () => {
    await page.goto(url('/admin/clients'));
    await page.getByLabel('Client name').fill('Lab interface');
    await page.getByRole('button', { name: 'Create client' }).click();
    const secret = page.getByTestId('client-secret');
    await secret.waitFor();
    expect((await secret.textContent())?.length).toBeGreaterThan(16);
    await page.getByRole('table', { name: 'Client applications' }).getByText('Lab interface').waitFor();
    await shot('admin-clients');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByTestId('client-secret').count()).toBe(0);
  }, 120_000);

  it('writes, deploys and executes a bot, and shows its log', async () => {
    await page.goto(url('/admin/bots'));
    await page.getByLabel('Bot name').fill('Echo bot');
    await page.getByRole('button', { name: 'Create bot' }).click();
    await page.waitForURL(/\/admin\/bots\/[^/]+$/);
    const editor = page.locator('.cm-content');
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    // CodeMirror closes brackets as they are typed: insert the text as one paste-like input.
    await page.keyboard.insertText(
      'export async function handler(client, event) {\n  console.log("shouting " + event.input.word);\n  return { shout: String(event.input.word).toUpperCase() };\n}\n',
    );
    await page.getByRole('button', { name: 'Save and deploy' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved and deployed' }).waitFor({ timeout: 60_000 });
    await page.getByLabel('Input').fill('{ "word": "hello" }');
    await page.getByRole('button', { name: 'Execute' }).click();
    const output = page.getByRole('region', { name: 'Bot output' });
    await output.getByText('"shout": "HELLO"').waitFor({ timeout: 60_000 });
    // The run's AuditEvent may be recorded just after the answer: refresh until it shows.
    const log = page.getByRole('table', { name: 'Bot logs' }).getByText('shouting hello');
    for (let i = 0; i < 20 && !(await log.isVisible()); i++) {
      await page.waitForTimeout(500);
      await page.getByRole('button', { name: 'Refresh logs' }).click();
    }
    await log.waitFor();
    await shot('admin-bot');
  }, 180_000);

  it("shows a subscription's delivery attempts and resends a resource", async () => {
    // A loopback endpoint is refused (no allow-list here): each attempt fails and is recorded.
    const sub = await api.createResource({
      resourceType: 'Subscription',
      status: 'active',
      reason: 'e2e deliveries',
      criteria: 'Observation?code=e2e-deliveries',
      channel: { type: 'rest-hook', endpoint: 'http://127.0.0.1:9/hook', payload: 'application/fhir+json' },
    } as Resource);
    // The server learns of a new subscription at once; give its cache a moment all the same.
    await new Promise((r) => setTimeout(r, 300));
    const obs = await api.createResource({
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ code: 'e2e-deliveries' }] },
    } as Resource);
    await page.goto(url(`/Subscription/${sub.id}/deliveries`));
    const table = page.getByRole('table', { name: 'Subscription deliveries' });
    const row = table
      .getByRole('row')
      .filter({ hasText: `Observation/${obs.id}` })
      .first();
    for (let i = 0; i < 20 && !(await row.isVisible()); i++) {
      await page.waitForTimeout(500);
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
    await row.waitFor();
    expect(await row.textContent()).toContain('failed');
    expect(await row.textContent()).toContain('loopback, private, link-local or metadata address');
    await page
      .getByRole('button', { name: `Resend Observation/${obs.id}` })
      .first()
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: `Observation/${obs.id} sent again.` })
      .waitFor();
    await shot('subscription-deliveries');
  }, 120_000);

  it('keeps project secrets and access policies', async () => {
    await page.goto(url('/admin/secrets'));
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByLabel('Name').fill('LAB_API_KEY');
    await page.getByLabel('Value').fill('s3cr3t-value');
    await page.getByRole('button', { name: 'Save secrets' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const projectId = (await api.getSessionDetails())?.project?.id as string;
    const details = await api.getProjectAdmin<{ project: { secret?: { name: string; valueString?: string }[] } }>(
      projectId,
      {
        cache: 'no-cache',
      },
    );
    expect(details.project.secret).toEqual([{ name: 'LAB_API_KEY', valueString: 's3cr3t-value' }]);

    await page.goto(url('/admin/sites'));
    await page.getByRole('button', { name: 'Add site' }).click();
    await page.getByLabel('Site name').fill('Clinic portal');
    await page.getByLabel('Domains (comma separated)').fill('portal.example.org, clinic.example.org');
    await page.getByRole('button', { name: 'Save sites' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const withSites = await api.getProjectAdmin<{ project: { site?: { name: string; domain: string[] }[] } }>(
      projectId,
      { cache: 'no-cache' },
    );
    expect(withSites.project.site).toEqual([
      { name: 'Clinic portal', domain: ['portal.example.org', 'clinic.example.org'] },
    ]);

    await page.goto(url('/admin/policies'));
    await page.getByRole('button', { name: 'New access policy' }).click();
    const dialog = page.getByRole('dialog', { name: 'New access policy' });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const policies = page.getByRole('table', { name: 'Access policies' });
    await policies.getByText('New policy').waitFor();
    // Edited as JSON: renamed.
    await policies.getByRole('row').filter({ hasText: 'New policy' }).getByRole('button', { name: 'Edit' }).click();
    const editDialog = page.getByRole('dialog', { name: 'Edit access policy' });
    const policyJson = editDialog.getByLabel('Access policy');
    const policy = JSON.parse(await policyJson.inputValue()) as Resource;
    await policyJson.fill(JSON.stringify({ ...policy, name: 'Lab readers' }, null, 2));
    await editDialog.getByRole('button', { name: 'Save' }).click();
    await editDialog.waitFor({ state: 'detached' });
    await policies.getByText('Lab readers').waitFor();
    expect((await api.readResource('AccessPolicy' as 'Patient', policy.id as string, { cache: 'no-cache' })).name).toBe(
      'Lab readers',
    );
    await shot('admin-policies');
  }, 120_000);

  it('launches a SMART app registered to the project', async () => {
    await api.createResource({
      resourceType: 'ClientApplication',
      name: 'Growth charts',
      launchUri: url('/smart-launch-target'),
      redirectUri: url('/smart-launch-target'),
    } as never);
    await page.goto(url('/admin/apps'));
    const row = page.getByRole('table', { name: 'SMART apps' }).getByRole('row').filter({ hasText: 'Growth charts' });
    await row.waitFor();
    await shot('admin-apps');
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      row.getByRole('button', { name: 'Launch' }).click(),
    ]);
    await popup.waitForURL(/smart-launch-target/);
    const launched = new URL(popup.url());
    await popup.close();
    expect(launched.searchParams.get('iss')).toBe(url('/fhir/R4'));
    const launch = await api.readResource('SmartAppLaunch' as 'Patient', launched.searchParams.get('launch') as string);
    expect(launch.resourceType).toBe('SmartAppLaunch');
  }, 120_000);

  it('shows the super admin page: projects, database statistics, reindex', async () => {
    await page.goto(url('/admin/super'));
    await page.getByRole('table', { name: 'Projects' }).getByText('Super Admin').first().waitFor();
    await page
      .getByRole('region', { name: 'Database statistics' })
      .or(page.getByLabel('Database statistics'))
      .first()
      .waitFor();
    await page.getByLabel('Resource types (comma separated').fill('Patient');
    await page.getByRole('button', { name: 'Reindex resources' }).click();
    // A job on the server (Prefer: respond-async), polled until done: the counts per type at the end.
    await page
      .getByRole('status')
      .filter({ hasText: /Reindexed [\d,]+ resources/ })
      .waitFor({ timeout: 60_000 });
    await page.getByRole('table', { name: 'Reindexed per type' }).getByText('Patient').waitFor();
    await shot('super-admin');
  }, 120_000);

  it('registers a new user and project, and signs out', async () => {
    await signOut();
    await page.goto(url('/register'));
    await page.getByLabel('First name').fill('Rosalind');
    await page.getByLabel('Last name').fill('Franklin');
    await page.getByLabel('Email').fill(USER_EMAIL);
    await page.getByLabel('Password').fill('double-helix-1953!');
    await page.getByLabel('Project name').fill('Crystallography');
    await shot('register');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    // The home page names the project too ("Project Crystallography"): the menu's label is the one meant.
    await page.getByRole('button', { name: 'Account menu' }).click();
    await page.getByText('Crystallography', { exact: true }).waitFor();
    await page.keyboard.press('Escape');
  }, 120_000);

  it('resets a forgotten password through the emailed link', async () => {
    await signOut();
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email').fill(USER_EMAIL);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'an email with a link' }).waitFor();
    // The link's id and secret, as the email would carry them.
    const { rows } = await server.pool.query<{ content: string }>(
      "SELECT content FROM resource WHERE resource_type = 'UserSecurityRequest' ORDER BY last_updated DESC LIMIT 1",
    );
    const request = JSON.parse(rows[0].content) as { id: string; secret: string };
    // A wrong secret is refused with the server's message.
    await page.goto(url(`/setpassword/${request.id}/wrong-secret`));
    await page.getByLabel('New password').fill('new-password-2024!');
    await page.getByLabel('Confirm password').fill('new-password-2024!');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid or expired link' }).waitFor();
    await page.goto(url(`/setpassword/${request.id}/${request.secret}`));
    await page.getByLabel('New password').fill('new-password-2024!');
    await page.getByLabel('Confirm password').fill('new-password-2024!');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is set' }).waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(USER_EMAIL);
    await page.getByLabel('Password').fill('double-helix-1953!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await shot('signin-error');
    await page.getByLabel('Password').fill('new-password-2024!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  }, 120_000);

  it('signs in with a second factor and a choice of project', async () => {
    const password = 'new-password-2024!'; // set through the emailed link above
    // Enrol a TOTP factor, and give the user a second project.
    const user = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await user.signInWithPassword({ email: USER_EMAIL, password });
    const status = await user.get<{ enrollUri: string }>('auth/mfa/status');
    const secret = new URL(status.enrollUri).searchParams.get('secret') as string;
    await user.post('auth/mfa/enroll', { token: await freshTotp(secret) }, 'application/json');
    const started = await user.startLogin({ email: USER_EMAIL, password });
    const code = started.code ? undefined : (await user.verifyMfa(started.login, await freshTotp(secret))).code;
    expect(code ?? started.code).toBeTruthy();
    await user.post('auth/newproject', { login: started.login, projectName: 'Second lab' }, 'application/json', {
      noAuth: true,
    });

    await signOut();
    await page.getByLabel('Email').fill(USER_EMAIL);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const otp = page.getByLabel('Authentication code');
    await otp.waitFor();
    await shot('signin-mfa');
    await otp.fill(await freshTotp(secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    // Memberships name their project (the server gives its name as the display).
    await page.getByRole('radio', { name: /^Second lab/ }).check();
    await shot('signin-project');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    await page.getByRole('button', { name: 'Account menu' }).click();
    await page.getByText('Second lab', { exact: true }).waitFor();
    await page.keyboard.press('Escape');
  }, 120_000);

  it("shows the server's message for a resource that does not exist", async () => {
    await page.goto(url('/Patient/00000000-0000-4000-8000-000000000000'));
    await page
      .getByRole('alert')
      .filter({ hasText: /not found/i })
      .waitFor();
  }, 60_000);

  it('fits a tablet screen', async () => {
    await page.setViewportSize({ width: 800, height: 1100 });
    await page.goto(url('/Patient'));
    await page.getByRole('button', { name: 'Toggle navigation' }).waitFor();
    await page.getByRole('table', { name: 'Patient search results' }).waitFor();
    await shot('tablet-search');
    await page.getByRole('button', { name: 'Toggle navigation' }).click();
    await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Observation' }).click();
    await page.waitForURL(/\/Observation/);
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 60_000);
});
