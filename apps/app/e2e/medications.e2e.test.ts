/**
 * Medications end to end in Chromium against a real server: amoxicillin prescribed for a patient
 * with a penicillin allergy (the warning acknowledged, the sig shown and stored, the override
 * recorded), a dose of it recorded as given, the prescription stopped with a reason (it moves to Stopped), and the tab fitting a
 * phone, a tablet and a desktop.
 */
import { HearthClient, MemoryStorage, type MedicationAdministration, type MedicationRequest } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';

describe.runIf(chromiumForSuite())('medications in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
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
      name: [{ given: ['Ada'], family: 'Lovelace' }],
    });
    patientId = patient.id as string;
    await api.createResource({
      resourceType: 'AllergyIntolerance',
      patient: { reference: `Patient/${patientId}` },
      criticality: 'high',
      clinicalStatus: {
        coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }],
      },
      code: {
        coding: [{ system: 'http://snomed.info/sct', code: '373270004' }],
        text: 'Penicillin',
      },
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('prescribes amoxicillin past a penicillin allergy warning, records a dose given, then stops it with a reason', async () => {
    await page.goto(url(`/Patient/${patientId}/medications`));
    const form = page.getByRole('form', { name: 'Prescribe' });
    await form.getByRole('textbox', { name: 'Medication' }).fill('amoxicillin 500');
    await page.getByRole('option', { name: /amoxicillin 500 MG Oral Capsule/ }).click();
    await form.getByRole('textbox', { name: 'Dose', exact: true }).fill('1');
    await form.getByRole('textbox', { name: 'Frequency' }).click();
    await page.getByRole('option', { name: '3 times a day' }).click();
    await form.getByRole('textbox', { name: 'Duration (days)' }).fill('10');
    await form.getByRole('textbox', { name: 'Quantity to dispense' }).fill('30');
    await form.getByRole('textbox', { name: 'Refills' }).fill('0');
    await form
      .getByRole('status', { name: 'Sig' })
      .getByText('Sig: Take 1 capsule by mouth 3 times a day for 10 days')
      .waitFor();
    await form
      .getByRole('alert')
      .getByText(/Allergic to Penicillin \(high criticality\)/)
      .waitFor();
    expect(await form.getByRole('button', { name: 'Sign prescription' }).isDisabled()).toBe(true);
    await form.getByText('I have reviewed the allergy and prescribe anyway').click();
    await form.getByRole('button', { name: 'Sign prescription' }).click();
    const active = page.getByRole('region', { name: 'Active medications' });
    await active.getByText('amoxicillin 500 MG Oral Capsule').waitFor();
    await active.getByText('Take 1 capsule by mouth 3 times a day for 10 days').waitFor();
    await page.screenshot({ path: `${screenshotDir}/medications-prescribed.png`, fullPage: true });
    const [request] = (await api.searchResources(
      'MedicationRequest',
      { subject: `Patient/${patientId}` },
      { cache: 'no-cache' },
    )) as MedicationRequest[];
    expect(request).toMatchObject({
      status: 'active',
      medicationCodeableConcept: { coding: [{ code: '308191' }] },
      dispenseRequest: { numberOfRepeatsAllowed: 0, quantity: { value: 30 } },
      detectedIssue: [{ reference: '#allergy1' }],
    });

    // The administration record: a dose given, preset from the prescription.
    await active.getByRole('button', { name: 'Record administration' }).click();
    const given = active.getByRole('form', { name: 'Record administration of amoxicillin 500 MG Oral Capsule' });
    expect(await given.getByRole('textbox', { name: 'Dose given' }).inputValue()).toBe('1');
    await given.getByRole('button', { name: 'Record' }).click();
    const administrations = active.getByRole('list', { name: 'Administrations of amoxicillin 500 MG Oral Capsule' });
    await administrations.getByText(/· 1 capsule · Oral route/).waitFor();
    const [administration] = (await api.searchResources(
      'MedicationAdministration',
      { request: `MedicationRequest/${request.id as string}` },
      { cache: 'no-cache' },
    )) as MedicationAdministration[];
    expect(administration).toMatchObject({
      status: 'completed',
      subject: { reference: `Patient/${patientId}` },
      dosage: { dose: { value: 1, unit: 'capsule' } },
      performer: [{ actor: { reference: expect.stringMatching(/^Practitioner\//) } }],
    });

    await active.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('textbox', { name: 'Reason for stopping' }).fill('Rash after the first dose');
    await page.getByRole('button', { name: 'Confirm stop' }).click();
    const stopped = page.getByRole('region', { name: 'Stopped medications' });
    await stopped.getByText('amoxicillin 500 MG Oral Capsule').waitFor();
    await stopped.getByText(/Stopped: Rash after the first dose/).waitFor();
    const after = (await api.readResource('MedicationRequest', request.id as string)) as MedicationRequest;
    expect(after).toMatchObject({ status: 'stopped', statusReason: { text: 'Rash after the first dose' } });
  }, 180_000);

  it('fits a phone, a tablet and a desktop', async () => {
    const problems: string[] = [];
    for (const width of [390, 820, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(url(`/Patient/${patientId}/medications`));
      await page
        .getByRole('region', { name: 'Stopped medications' })
        .getByText('amoxicillin 500 MG Oral Capsule')
        .waitFor();
      await page.waitForLoadState('networkidle');
      const overflow = await overflowsHorizontally(page);
      if (overflow) problems.push(`${width} scrolls sideways: ${JSON.stringify(overflow)}`);
      const violations = await seriousViolations(page);
      if (violations.length) problems.push(`${width}:\n${describeViolations(violations)}`);
      await page.screenshot({ path: `${screenshotDir}/medications-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 180_000);
});
