/**
 * Billing end to end in Chromium against a real server: coverage added on the Billing tab (and
 * shown on the patient header), an encounter's charges captured from its procedures and priced by
 * the fee schedule, a claim built, validated and submitted, the payer's answer recorded, the
 * balance and the answer's ExplanationOfBenefit shown (its link followed), the CMS-1500 PDF
 * downloaded and read back; and the tab fitting a phone, a tablet and a desktop.
 */
import { readFile } from 'node:fs/promises';
import { HearthClient, MemoryStorage, type Claim } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const CPT = 'http://www.ama-assn.org/go/cpt';
const NPI = 'http://hl7.org/fhir/sid/us-npi';

describe.runIf(chromiumForSuite())('billing in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patientId = '';
  const url = (path: string) => new URL(path, server.baseUrl).toString();

  /** Jane Doe's visit of 2025-03-14: a level-3 office visit, two venipunctures, an ECG; hypertension and diabetes. */
  async function seed(): Promise<void> {
    const create = (r: Record<string, unknown>) => api.createResource(r as never) as Promise<{ id?: string }>;
    const patient = await create({
      resourceType: 'Patient',
      name: [{ family: 'Doe', given: ['Jane'] }],
      gender: 'female',
      birthDate: '1980-05-02',
    });
    patientId = patient.id as string;
    await create({ resourceType: 'Organization', name: 'Acme Health' });
    const clinic = await create({
      resourceType: 'Organization',
      name: 'Hearth Family Clinic',
      identifier: [{ system: NPI, value: '1234567893' }],
    });
    for (const [code, price] of [
      ['99213', 120],
      ['36415', 15],
      ['93000', 45.5],
    ] as const) {
      await create({
        resourceType: 'ChargeItemDefinition',
        url: `http://example.org/fees/${code}`,
        status: 'active',
        code: { coding: [{ system: CPT, code }] },
        propertyGroup: [{ priceComponent: [{ type: 'base', amount: { value: price, currency: 'USD' } }] }],
      });
    }
    const encounter = await create({
      resourceType: 'Encounter',
      status: 'finished',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
      type: [{ coding: [{ system: CPT, code: '99213' }], text: 'Office visit' }],
      subject: { reference: `Patient/${patientId}` },
      serviceProvider: { reference: `Organization/${clinic.id}` },
      period: { start: '2025-03-14T09:00:00Z', end: '2025-03-14T09:30:00Z' },
    });
    const procedure = (code: string, text: string, at: string) =>
      create({
        resourceType: 'Procedure',
        status: 'completed',
        code: { coding: [{ system: CPT, code }], text },
        subject: { reference: `Patient/${patientId}` },
        encounter: { reference: `Encounter/${encounter.id}` },
        performedDateTime: at,
      });
    await procedure('36415', 'Venipuncture', '2025-03-14T09:10:00Z');
    await procedure('36415', 'Venipuncture', '2025-03-14T09:10:00Z');
    await procedure('93000', 'Electrocardiogram', '2025-03-14T09:20:00Z');
    for (const [code, text] of [
      ['I10', 'Essential hypertension'],
      ['E11.9', 'Type 2 diabetes'],
    ]) {
      await create({
        resourceType: 'Condition',
        category: [
          {
            coding: [
              { system: 'http://terminology.hl7.org/CodeSystem/condition-category', code: 'encounter-diagnosis' },
            ],
          },
        ],
        code: { coding: [{ system: 'http://hl7.org/fhir/sid/icd-10-cm', code }], text },
        subject: { reference: `Patient/${patientId}` },
        encounter: { reference: `Encounter/${encounter.id}` },
      });
    }
  }

  beforeAll(async () => {
    await ensureAppBuilt();
    server = await createTestApp({ listen: true, config: { adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD } });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page.setDefaultTimeout(30_000);
    api = new HearthClient({ baseUrl: server.baseUrl, storage: new MemoryStorage() });
    await api.signInWithPassword({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
    await seed();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('adds the coverage, which the patient header then shows', async () => {
    await page.goto(url(`/Patient/${patientId}/billing`));
    const eligibility = page.getByRole('note', { name: 'Coverage' });
    await eligibility.getByText('No active coverage').waitFor();
    await page.getByRole('button', { name: 'Add coverage' }).click();
    const form = page.getByRole('form', { name: 'Add coverage' });
    await form.getByRole('textbox', { name: 'Payer', exact: true }).fill('Acme');
    await page.getByRole('option', { name: 'Acme Health' }).click();
    await form.getByRole('textbox', { name: 'Member id' }).fill('W123456789');
    await form.getByRole('textbox', { name: 'Group number' }).fill('GRP-42');
    await form.getByLabel('Start').fill('2025-01-01');
    await form.getByLabel('End').fill('2099-12-31');
    await form.getByRole('button', { name: 'Save coverage' }).click();
    await page
      .getByRole('list', { name: 'Coverages' })
      .getByText(/Acme Health · Member W123456789/)
      .waitFor();
    await eligibility.getByText(/Coverage: Acme Health · Member W123456789/).waitFor();
  }, 120_000);

  it('captures charges, builds, validates and submits a claim, records the answer, shows the balance, downloads the PDF', async () => {
    await page.goto(url(`/Patient/${patientId}/billing`));
    const encounter = page.getByRole('region', { name: /^Billing for Office visit/ });
    await encounter.getByText('No charges captured').waitFor();
    await encounter.getByRole('button', { name: 'Capture charges' }).click();
    const charges = encounter.getByRole('region', { name: /^Charges of/ });
    await charges.getByRole('row', { name: /36415 Venipuncture 2 \$30\.00 billable/ }).waitFor();
    await charges.getByRole('row', { name: /99213 Office visit 1 \$120\.00/ }).waitFor();
    await charges.getByRole('row', { name: /93000 Electrocardiogram 1 \$45\.50/ }).waitFor();

    await encounter.getByRole('button', { name: 'Build claim' }).click();
    const claim = encounter.getByRole('region', { name: /^Claim / });
    await claim.getByText('Total $195.50').waitFor();
    await claim.getByRole('button', { name: 'Validate claim' }).click();
    await claim.getByRole('status').getByText('The claim is valid').waitFor();
    await page.screenshot({ path: `${screenshotDir}/billing-claim-draft.png`, fullPage: true });
    await claim.getByRole('button', { name: 'Submit claim' }).click();
    await claim.getByText('submitted', { exact: true }).waitFor();
    const balance = claim.getByRole('group', { name: 'Claim balance' });
    await balance.getByText('Balance $195.50').waitFor();
    await charges.getByRole('row', { name: /36415 .* billed/ }).waitFor();

    await claim.getByRole('button', { name: 'Record payer response' }).click();
    const answer = claim.getByRole('form', { name: 'Payer response' });
    await answer.getByRole('textbox', { name: 'Paid for line 1' }).fill('80');
    await answer.getByRole('textbox', { name: 'Adjustment for line 1' }).fill('20');
    await answer.getByRole('textbox', { name: 'Paid for line 2' }).fill('30');
    await answer.getByRole('textbox', { name: 'Paid for line 3' }).fill('25.25');
    await answer.getByRole('textbox', { name: 'Adjustment for line 3' }).fill('10');
    await answer.getByRole('textbox', { name: 'Payer message' }).fill('Processed as primary');
    await answer.getByRole('button', { name: 'Save response' }).click();
    await balance.getByText('Balance $30.25').waitFor();
    await balance.getByText('Paid $135.25').waitFor();
    await balance.getByText('Adjusted $30.00').waitFor();
    // The payer's answer as its ExplanationOfBenefit, summarised under the balance and linked.
    const explained = claim.getByRole('list', { name: 'Explanations of benefit' });
    const eobItem = explained.getByRole('listitem', { name: /^Explanation of benefit of / });
    await eobItem.getByText('Processed', { exact: true }).waitFor();
    await eobItem.getByText('Paid $135.25').waitFor();
    await eobItem.getByText('Adjusted $30.00').waitFor();
    await eobItem.getByText('3 lines').waitFor();
    await eobItem.getByText('Processed as primary').waitFor();
    await page.screenshot({ path: `${screenshotDir}/billing-claim-paid.png`, fullPage: true });

    const [claimResource] = (await api.searchResources(
      'Claim',
      { patient: `Patient/${patientId}` },
      { cache: 'no-cache' },
    )) as Claim[];
    expect(claimResource.status).toBe('active');
    const responses = await api.searchResources(
      'ClaimResponse',
      { request: `Claim/${claimResource.id}` },
      { cache: 'no-cache' },
    );
    expect(responses[0]).toMatchObject({ outcome: 'complete', disposition: 'Processed as primary' });
    const [eob] = await api.searchResources(
      'ExplanationOfBenefit',
      { claim: `Claim/${claimResource.id}` },
      { cache: 'no-cache' },
    );
    expect(eob).toMatchObject({
      outcome: 'complete',
      claimResponse: { reference: `ClaimResponse/${responses[0].id}` },
      payment: { amount: { value: 135.25 } },
    });
    expect(await eobItem.getByRole('link').getAttribute('href')).toBe(`/ExplanationOfBenefit/${eob.id}`);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      claim.getByRole('button', { name: 'Download PDF' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`claim-${claimResource.id}.pdf`);
    const bytes = await readFile(await download.path());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
    for (const expected of ['DOE, JANE', 'W123456789', 'I10', '99213', '36415', '$ 195.50', '$ 135.25', '$ 30.25']) {
      expect(text).toContain(expected);
    }

    // The link opens the EOB itself.
    await eobItem.getByRole('link').click();
    await page.waitForURL(`**/ExplanationOfBenefit/${eob.id}`);
    await page.getByText('Processed as primary').first().waitFor();
  }, 180_000);

  it('fits a phone, a tablet and a desktop', async () => {
    const problems: string[] = [];
    for (const width of [390, 820, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(url(`/Patient/${patientId}/billing`));
      await page.getByRole('group', { name: 'Claim balance' }).getByText('Balance $30.25').waitFor();
      await page.waitForLoadState('networkidle');
      const overflow = await overflowsHorizontally(page);
      if (overflow) problems.push(`${width} scrolls sideways: ${JSON.stringify(overflow)}`);
      const violations = await seriousViolations(page);
      if (violations.length) problems.push(`${width}:\n${describeViolations(violations)}`);
      await page.screenshot({ path: `${screenshotDir}/billing-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 180_000);
});
