/**
 * Imaging in the chart, end to end in Chromium against a real server: DICOM files (made by the
 * server's test helpers) imported for a patient through ImagingStudy/$import-dicom show in the
 * patient's Imaging tab as a study with its series and instances; an instance opens in the DICOM
 * viewer, whose canvas holds the image's pixels and follows the window; and both pages fit a
 * phone, a tablet and a desktop.
 */
import { randomUUID } from 'node:crypto';
import { HearthClient, MemoryStorage, type ImagingStudy, type Patient } from '@hearth/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dicomFile, testCtImage } from '../../server/src/imaging/testing.js';
import { createTestApp, type TestApp } from '../../server/src/test/app.js';
import { describeViolations, overflowsHorizontally, seriousViolations } from './axe.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite, ensureAppBuilt, screenshotDir } from './harness.js';

const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct-horse-battery-9';
const WIDTHS = [390, 820, 1280];

/** What the e2e reads of a canvas inside the page (the root compile has no DOM library). */
interface PageCanvas {
  width: number;
  height: number;
  getContext(
    type: '2d',
  ): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
}

/** A fresh UID under 2.25 (a UUID as a decimal integer, PS3.5 §B.2). */
function uid(): string {
  return `2.25.${BigInt(`0x${randomUUID().replace(/-/g, '')}`).toString()}`;
}

describe.runIf(chromiumForSuite())('imaging in the chart in Chromium', () => {
  let server: TestApp;
  let browser: Browser;
  let page: Page;
  let api: HearthClient;
  let patient: Patient;
  let study: ImagingStudy;
  const studyUid = uid();
  const seriesUid = uid();
  const sopUids = [uid(), uid()];
  const url = (path: string) => new URL(path, server.baseUrl).toString();
  const shot = (name: string) => page.screenshot({ path: `${screenshotDir}/${name}.png`, fullPage: true });
  const canvas = () => page.getByRole('img', { name: /^DICOM image/ });
  /** The canvas's RGBA pixels, read back from the page. */
  const pixels = () =>
    canvas().evaluate((el) => {
      const c = el as unknown as PageCanvas;
      return Array.from(c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data ?? []);
    });

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

    // The patient, then two instances of one CT series whose PatientID is the patient's MRN.
    patient = await api.createResource<Patient>({
      resourceType: 'Patient',
      identifier: [{ system: 'urn:example:mrn', value: 'MRN-IMG-7' }],
      name: [{ given: ['Iris'], family: 'Imaged' }],
      birthDate: '1970-03-04',
    });
    const files = [
      dicomFile({ studyUid, seriesUid, sopUid: sopUids[0], patientId: 'MRN-IMG-7', image: testCtImage(64, 96) }),
      dicomFile({ studyUid, seriesUid, sopUid: sopUids[1], patientId: 'MRN-IMG-7', instanceNumber: 2 }),
    ];
    for (const body of files) {
      const res = await fetch(url('/fhir/R4/ImagingStudy/$import-dicom'), {
        method: 'POST',
        headers: { authorization: `Bearer ${api.getAccessToken()}`, 'content-type': 'application/dicom' },
        body,
      });
      expect(res.status).toBe(201);
      study = (await res.json()) as ImagingStudy;
    }
    expect(study.subject.reference).toBe(`Patient/${patient.id}`);

    // Signed in through the form, as a user would.
    await page.goto(url('/signin'));
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
  }, 300_000);

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page) {
      await shot(`failed-imaging-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('lists the study in the Imaging tab, opens an instance and windows it', async () => {
    await page.goto(url(`/Patient/${patient.id}`));
    await page.getByRole('tab', { name: 'Imaging' }).click();
    await page.waitForURL(/\/imaging$/);
    const studyButton = page.getByRole('button', { name: /CT chest/ });
    await expect.poll(() => studyButton.textContent()).toMatch(/CT.*1 series · 2 instances · Accession ACC-1/);
    await studyButton.click();
    await page.getByRole('button', { name: /^Series 1 · CT/ }).click();
    const instances = page.getByRole('list', { name: /^Instances of Series 1/ });
    await expect.poll(() => instances.getByRole('button').allTextContents()).toEqual(['Instance 1', 'Instance 2']);
    await instances.getByRole('button', { name: 'Instance 1' }).click();
    await page.waitForURL(new RegExp(`/ImagingStudy/${study.id}/instance/${sopUids[0]}$`));

    // The viewer: the image's size, attributes from the file, pixels on the canvas.
    await canvas().waitFor();
    expect(await canvas().getAttribute('aria-label')).toBe('DICOM image: CT, 96 × 64');
    const attributes = page.getByRole('table', { name: 'DICOM attributes' });
    expect(await attributes.textContent()).toMatch(/Jane Doe \(MRN-IMG-7\)/);
    expect(await attributes.textContent()).toContain('Explicit VR Little Endian (1.2.840.10008.1.2.1)');
    await expect.poll(async () => (await pixels()).length).toBe(96 * 64 * 4);
    const before = await pixels();
    const levels = new Set(before.filter((_, i) => i % 4 === 0));
    // The file's window (40 / 400 HU): air black, the bone disc white, soft tissue grey between.
    expect(levels.has(0)).toBe(true);
    expect(levels.has(255)).toBe(true);
    expect(levels.size).toBeGreaterThan(10);
    expect(await page.getByText(/^Window 40 \/ 400/).isVisible()).toBe(true);

    // A wider window from the slider (keyboard): the rendering changes.
    const width = page.getByRole('slider', { name: 'Window width' });
    await width.focus();
    await page.keyboard.press('End');
    await expect.poll(async () => (await pixels()).join(',') !== before.join(',')).toBe(true);
    const widened = await pixels();
    expect(new Set(widened.filter((_, i) => i % 4 === 0)).has(0)).toBe(false);

    // Dragging on the image moves the center (down: a lower center, a brighter image).
    await page.getByRole('button', { name: 'Reset window' }).click();
    await expect.poll(async () => (await pixels()).join(',')).toBe(before.join(','));
    const box = await canvas().boundingBox();
    if (!box) throw new Error('the canvas has no box');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.8, { steps: 5 });
    await page.mouse.up();
    const centered = Number(await canvas().getAttribute('data-window-center'));
    expect(centered).toBeLessThan(40);
    const dragged = await pixels();
    const sum = (p: number[]) => p.reduce((n, v) => n + v, 0);
    expect(sum(dragged)).toBeGreaterThan(sum(before));

    // The next instance of the series: the 2 × 2 8-bit one.
    await page.getByRole('button', { name: 'Next instance' }).click();
    await page.waitForURL(new RegExp(`/instance/${sopUids[1]}$`));
    await expect.poll(() => canvas().getAttribute('aria-label')).toBe('DICOM image: CT, 2 × 2');
    await expect.poll(async () => (await pixels()).filter((_, i) => i % 4 === 0)).toEqual([0, 85, 170, 255]);
    await page.getByRole('link', { name: "Back to the patient's imaging" }).click();
    await page.waitForURL(new RegExp(`/Patient/${patient.id}/imaging$`));
  }, 120_000);

  it('fits the Imaging tab and the viewer at phone, tablet and desktop widths', async () => {
    const pages = [
      {
        name: 'imaging-tab',
        path: `/Patient/${patient.id}/imaging`,
        ready: async () => {
          await page.getByRole('button', { name: /CT chest/ }).click();
          await page.getByRole('button', { name: /^Series 1 · CT/ }).click();
          await page.getByRole('button', { name: 'Instance 2' }).waitFor();
        },
      },
      {
        name: 'imaging-viewer',
        path: `/ImagingStudy/${study.id}/instance/${sopUids[0]}`,
        ready: async () => {
          await canvas().waitFor();
          await page.getByRole('table', { name: 'DICOM attributes' }).waitFor();
        },
      },
    ];
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const { name, path, ready } of pages) {
        await page.goto(url(path));
        await ready();
        await page.waitForLoadState('networkidle');
        if (!(await page.getByRole('region', { name: 'Patient header' }).isVisible())) {
          problems.push(`${name} at ${width}: no patient header`);
        }
        const overflow = await overflowsHorizontally(page);
        if (overflow) problems.push(`${name} at ${width} scrolls sideways: ${JSON.stringify(overflow)}`);
        const violations = await seriousViolations(page);
        if (violations.length) problems.push(`${name} at ${width}:\n${describeViolations(violations)}`);
        if (name === 'imaging-viewer') {
          // The image fits the width and is drawn at every width.
          const box = await canvas().boundingBox();
          if (!box || box.width > width || box.width < 100) problems.push(`viewer at ${width}: canvas ${box?.width}`);
          if (!(await pixels()).some((v, i) => i % 4 !== 3 && v > 0)) problems.push(`viewer at ${width}: blank`);
        }
        await shot(`${name}-${width}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }, 180_000);
});
