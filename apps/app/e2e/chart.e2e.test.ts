/**
 * The patient chart end to end in Chromium against a real server: a Synthea patient loaded through
 * the API shows the right counts; the patient list finds a patient by phone, birth date and
 * identifier; an encounter is started, vital signs recorded (BMI computed and stored), a note
 * written and signed, a diagnosis added, the note amended after signing (a new version in its
 * history); the timeline lists it all; and the chart's pages fit a phone, a tablet and a desktop.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { HearthClient, MemoryStorage, type Bundle, type Resource } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, repoRoot, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const SYNTHEA = join(repoRoot, '..', 'shared', 'data', 'synthea-r4');
const WIDTHS = [390, 820, 1280];

/** The smallest Synthea patient with conditions, medications and observations, and its provider batches. */
function syntheaFiles(): { providers: string[]; patient: string } | undefined {
  const manifest = join(SYNTHEA, 'manifest.json');
  if (!existsSync(manifest)) return undefined;
  const { patients } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    patients: { file: string; bytesUncompressed: number; resourceCounts: Record<string, number> }[];
  };
  const chosen = patients
    .filter((p) => ['Condition', 'MedicationRequest', 'Observation'].every((t) => p.resourceCounts[t] > 0))
    .sort((a, b) => a.bytesUncompressed - b.bytesUncompressed)[0];
  const providers = readdirSync(SYNTHEA).filter((f) => /^(hospital|practitioner)Information.*\.json\.gz$/.test(f));
  return chosen && providers.length === 2
    ? { providers: providers.map((f) => join(SYNTHEA, f)), patient: join(SYNTHEA, chosen.file) }
    : undefined;
}

const readBundle = (file: string) => JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as Bundle;

describe.runIf(chromiumForSuite())('the patient chart in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
  let encounterId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();
  const shot = (name: string) => page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });
  const header = () => page.getByRole('region', { name: 'Patient header' });

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
    // Signed in through the form, as a user would.
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  }, 300_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page) {
      await shot(`failed-chart-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it.skipIf(!syntheaFiles())(
    "shows a Synthea patient's chart with the bundle's counts of conditions, medications and observations",
    async () => {
      const files = syntheaFiles()!;
      for (const file of files.providers) await api.executeBatch(readBundle(file));
      const bundle = readBundle(files.patient);
      const response = await api.executeBatch(bundle);
      const created = (response.entry ?? []).map((e) => e.response?.status ?? '');
      expect(created.filter((s) => !s.startsWith('201') && !s.startsWith('200'))).toEqual([]);
      const count = (type: string) => (bundle.entry ?? []).filter((e) => e.resource?.resourceType === type).length;
      const patientEntry = (response.entry ?? []).find((e) => e.response?.location?.startsWith('Patient/'));
      const syntheaId = patientEntry?.response?.location?.split('/')[1] as string;
      const patient = (bundle.entry ?? []).find((e) => e.resource?.resourceType === 'Patient')?.resource as Resource;

      await page.goto(url(`/Patient/${syntheaId}`));
      const family = (patient.name as { family: string }[])[0].family;
      await header()
        .getByRole('heading', { name: new RegExp(family) })
        .waitFor();
      const counts = page.getByRole('list', { name: 'Record counts' });
      for (const [label, type] of [
        ['Conditions', 'Condition'],
        ['Medications', 'MedicationRequest'],
        ['Observations', 'Observation'],
        ['Encounters', 'Encounter'],
      ]) {
        const item = counts.getByRole('listitem').filter({ hasText: label });
        expect((await item.innerText()).replace(/\s+/g, ' '), label).toBe(`${count(type)} ${label}`);
      }
      // The header counts the active problems; the summary lists them.
      const active = (bundle.entry ?? [])
        .map((e) => e.resource as Resource)
        .filter(
          (r) =>
            r.resourceType === 'Condition' &&
            (r.clinicalStatus as { coding: { code: string }[] } | undefined)?.coding[0].code === 'active',
        );
      await header()
        .getByText(`${active.length} active problem${active.length === 1 ? '' : 's'}`)
        .waitFor();
      expect(await page.getByLabel('Problems').getByRole('listitem').count()).toBe(active.length);
      await page.getByRole('figure', { name: /Body Weight chart/i }).waitFor();
      await shot('chart-synthea-summary');

      // The timeline: the record's types with their counts, newest first, described in words.
      await page.getByRole('tab', { name: 'Timeline' }).click();
      const timeline = page.getByLabel('Patient timeline');
      await timeline.waitFor();
      await page
        .getByRole('status')
        .filter({ hasText: /^Showing 20 of \d+$/ })
        .waitFor();
      expect(await timeline.innerText()).not.toContain('"resourceType"');
      await page.getByRole('textbox', { name: 'Types' }).click();
      for (const type of ['Observation', 'MedicationRequest', 'Encounter']) {
        await page.getByRole('option', { name: `${type} (${count(type)})` }).waitFor();
      }
      await page.getByRole('option', { name: `Condition (${count('Condition')})` }).click();
      await page.keyboard.press('Escape');
      await page
        .getByRole('status')
        .filter({ hasText: new RegExp(`of ${count('Condition')}$`) })
        .waitFor();
      await shot('chart-synthea-timeline');
    },
    300_000,
  );

  it('finds a patient by phone, birth date and identifier from one box', async () => {
    const patient = await api.createResource({
      resourceType: 'Patient',
      name: [{ given: ['Grace'], family: 'Hopper' }],
      gender: 'female',
      birthDate: '1986-12-09',
      telecom: [{ system: 'phone', value: '555-0142' }],
      identifier: [
        {
          type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR' }] },
          system: 'http://hospital.example/mrn',
          value: 'MRN-4711',
        },
      ],
    });
    patientId = patient.id as string;
    await api.createResource({ resourceType: 'Patient', name: [{ given: ['Other'], family: 'Person' }] });
    await api.createResource({
      resourceType: 'AllergyIntolerance',
      patient: { reference: `Patient/${patientId}` },
      code: { text: 'Penicillin' },
      criticality: 'high',
      clinicalStatus: {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }],
      },
    });
    const table = page.getByRole('table', { name: 'Patient search results' });
    for (const [typed, reads] of [
      ['555-0142', 'Phone number or identifier 555-0142'],
      ['09/12/1986', 'Born on 1986-12-09'],
      ['MRN-4711', 'Identifier MRN-4711'],
      ['hopp', 'Name contains "hopp"'],
    ]) {
      await page.goto(url('/Patient'));
      const box = page.getByRole('search', { name: 'Find a patient' });
      await box.getByRole('textbox', { name: 'Find a patient' }).fill(typed);
      await box.getByText(`Searching by: ${reads}`).waitFor();
      await box.getByRole('button', { name: 'Find' }).click();
      await table.getByText('Grace Hopper').waitFor();
      await table.getByText('Other Person').waitFor({ state: 'detached' });
      expect(await table.locator('tbody tr').count(), typed).toBe(1);
    }
    await shot('chart-patient-search');
    await table.getByText('Grace Hopper').click();
    await page.waitForURL(new RegExp(`/Patient/${patientId}`));
    await header().getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    await header().getByText('MR MRN-4711').waitFor();
    await header()
      .getByText(/years · Female · born/)
      .waitFor();
    await page.getByRole('note', { name: 'Allergy banner' }).getByText('Penicillin (high criticality)').waitFor();
  }, 120_000);

  it('charts an encounter: vitals with BMI, a signed note, a diagnosis, an amendment kept in history', async () => {
    await page.goto(url(`/Patient/${patientId}`));
    await header().getByRole('button', { name: 'Start encounter' }).click();
    await page.waitForURL(new RegExp(`/Patient/${patientId}/encounter/[^/]+$`));
    encounterId = new URL(page.url()).pathname.split('/')[4];
    await header().getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    const encounter = await api.readResource('Encounter', encounterId);
    expect(encounter).toMatchObject({ status: 'in-progress', subject: { reference: `Patient/${patientId}` } });

    // Vital signs: BMI appears as height and weight are typed, and is stored with the others.
    const vitals = page.getByRole('form', { name: 'Vital signs' });
    await vitals.getByLabel('Height (cm)').fill('170');
    await vitals.getByLabel('Weight (kg)').fill('65');
    await vitals.getByRole('status', { name: 'Body mass index' }).getByText('BMI: 22.5 kg/m2').waitFor();
    await vitals.getByLabel('Systolic (mmHg)').fill('128');
    await vitals.getByLabel('Diastolic (mmHg)').fill('84');
    await vitals.getByLabel('Heart rate (/min)').fill('71');
    await vitals.getByRole('button', { name: 'Save vital signs' }).click();
    const recorded = page.getByRole('list', { name: 'Recorded vital signs' });
    await recorded.getByText(/Body mass index/).waitFor();
    await recorded.getByText(/Systolic blood pressure 128 mmHg/).waitFor();
    const observations = await api.searchResources(
      'Observation',
      { encounter: `Encounter/${encounterId}` },
      { cache: 'no-cache' },
    );
    const byCode = (code: string) => observations.find((o) => o.code.coding?.[0]?.code === code);
    expect(byCode('39156-5')?.valueQuantity).toMatchObject({
      value: 22.5,
      system: 'http://unitsofmeasure.org',
      code: 'kg/m2',
    });
    expect(byCode('39156-5')?.derivedFrom?.map((r) => r.reference?.split('/')[0])).toEqual([
      'Observation',
      'Observation',
    ]);
    expect(byCode('8302-2')?.valueQuantity).toMatchObject({ value: 170, code: 'cm' });
    expect(byCode('85354-9')?.component?.map((c) => c.valueQuantity?.value)).toEqual([128, 84]);
    expect(observations).toHaveLength(5);

    // The note: a draft, then signed.
    const note = page.getByRole('group', { name: 'Encounter note' });
    await note
      .getByLabel('Note', { exact: true })
      .fill('Presents with a sore throat for three days.\n\nPlan: fluids, rest.');
    await note.getByRole('button', { name: 'Save draft' }).click();
    await note.getByText('Draft', { exact: true }).waitFor();
    await note.getByRole('button', { name: 'Sign note' }).click();
    await note
      .getByRole('status')
      .getByText(/^Signed by/)
      .waitFor();
    let [composition] = await api.searchResources(
      'Composition',
      { encounter: `Encounter/${encounterId}` },
      { cache: 'no-cache' },
    );
    expect(composition.status).toBe('final');
    expect(composition.author?.[0].reference).toMatch(/^Practitioner\//);
    expect(composition.attester?.[0]).toMatchObject({ mode: 'legal', party: composition.author?.[0] });
    expect(Date.parse(composition.attester?.[0].time ?? '')).toBeGreaterThan(Date.now() - 600_000);

    // A diagnosis: an encounter-diagnosis Condition, linked from the encounter.
    const diagnoses = page.getByRole('region', { name: 'Diagnoses' });
    await diagnoses.getByLabel('Diagnosis text').fill('Acute viral pharyngitis');
    await diagnoses.getByRole('button', { name: 'Add diagnosis' }).click();
    await diagnoses.getByRole('list', { name: 'Diagnoses' }).getByText('Acute viral pharyngitis').waitFor();
    const [condition] = await api.searchResources(
      'Condition',
      { encounter: `Encounter/${encounterId}` },
      { cache: 'no-cache' },
    );
    expect(condition.category?.[0].coding?.[0].code).toBe('encounter-diagnosis');
    expect(condition.code?.text).toBe('Acute viral pharyngitis');
    const linked = await api.readResource('Encounter', encounterId);
    expect(linked.diagnosis?.[0].condition.reference).toBe(`Condition/${condition.id}`);

    // Amended after signing: a new version, signed again, listed in the note's history.
    await note.getByRole('button', { name: 'Amend note' }).click();
    await note
      .getByLabel('Amended note')
      .fill('Presents with a sore throat for three days. Mild fever.\n\nPlan: fluids, rest.');
    await note.getByRole('button', { name: 'Sign amendment' }).click();
    await note.getByText('Amended', { exact: true }).waitFor();
    await note
      .getByLabel('Signed note')
      .getByText(/Mild fever/)
      .waitFor();
    const versions = note.getByRole('table', { name: 'Versions' });
    await expect.poll(() => versions.locator('tbody tr').count()).toBe(3);
    [composition] = await api.searchResources(
      'Composition',
      { encounter: `Encounter/${encounterId}` },
      { cache: 'no-cache' },
    );
    expect(composition.status).toBe('amended');
    expect(composition.attester).toHaveLength(2);
    expect(composition.meta?.versionId).not.toBe('1');
    const history = await api.readHistory('Composition', composition.id as string);
    expect(history.entry?.map((e) => (e.resource as Resource | undefined)?.status)).toEqual([
      'amended',
      'final',
      'preliminary',
    ]);
    await shot('chart-encounter');
    await page.getByRole('button', { name: 'Finish encounter' }).click();
    await page.getByRole('region', { name: 'Encounter' }).getByText('finished').waitFor();

    // The timeline has all of it, newest first, in words.
    await page.goto(url(`/Patient/${patientId}/timeline`));
    const timeline = page.getByLabel('Patient timeline');
    await timeline.getByText('Acute viral pharyngitis').waitFor();
    await timeline.getByText('Progress note').first().waitFor();
    await timeline.getByText('Body mass index (BMI) [Ratio]').waitFor();
    await timeline.getByText('Consultation').waitFor();
  }, 180_000);

  it('fits a phone, a tablet and a desktop: the header shown, nothing wider than the window', async () => {
    const pages: { name: string; path: string; ready: (p: Page) => Promise<unknown> }[] = [
      {
        name: 'summary',
        path: `/Patient/${patientId}`,
        ready: (p) => p.getByRole('list', { name: 'Record counts' }).waitFor(),
      },
      {
        name: 'timeline',
        path: `/Patient/${patientId}/timeline`,
        ready: (p) => p.getByLabel('Patient timeline').waitFor(),
      },
      {
        name: 'encounter',
        path: `/Patient/${patientId}/encounter/${encounterId}`,
        ready: (p) => p.getByRole('table', { name: 'Versions' }).waitFor(),
      },
      {
        name: 'patient-list',
        path: '/Patient',
        ready: (p) => p.getByRole('search', { name: 'Find a patient' }).waitFor(),
      },
    ];
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const { name, path, ready } of pages) {
        await page.goto(url(path));
        await ready(page);
        await page.waitForLoadState('networkidle');
        if (name !== 'patient-list' && !(await header().isVisible())) problems.push(`${name} at ${width}: no header`);
        const overflow = await overflowsHorizontally(page);
        if (overflow) problems.push(`${name} at ${width} scrolls sideways: ${JSON.stringify(overflow)}`);
        const violations = await seriousViolations(page);
        if (violations.length) problems.push(`${name} at ${width}:\n${describeViolations(violations)}`);
        await shot(`chart-${name}-${width}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 300_000);
});
