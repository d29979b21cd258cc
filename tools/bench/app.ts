/**
 * `npm run bench -- --only app`: the web app's first load, measured in Chromium (Debian's, through
 * playwright-core) against the built server on loopback, each run in a fresh browser context (cold
 * cache): the time to the sign-in form, and the time from pressing "Sign in" to the patient list
 * drawn (names in its rows), with the script and style bytes each step fetched (as sent: gzipped)
 * and the built bundle's chunk sizes. The budget: < 250 KB of gzipped script for the
 * sign-in page and the patient list together.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page, Request } from 'playwright-core';
import { signIn } from './auth.js';
import { median } from './load.js';
import { startServer } from './server.js';

const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--no-first-run',
];
const DIST = join('apps', 'app', 'dist', 'assets');
const BUDGET_KB = 250;
const PATIENTS = 25;

interface Step {
  ms: number;
  jsBytes: number;
  cssBytes: number;
  requests: number;
}

interface Run {
  signInForm: Step;
  patientList: Step;
}

/** Bytes of script and style fetched while `action` runs (encoded sizes: what went over the wire). */
async function measureStep(page: Page, action: () => Promise<void>): Promise<Step> {
  const sizes: Promise<{ url: string; bytes: number }>[] = [];
  const onFinished = (request: Request) => {
    sizes.push(request.sizes().then((s) => ({ url: request.url(), bytes: s.responseBodySize })));
  };
  page.on('requestfinished', onFinished);
  const started = performance.now();
  await action();
  const ms = performance.now() - started;
  page.off('requestfinished', onFinished);
  const done = await Promise.all(sizes);
  const sum = (ext: RegExp) => done.filter((d) => ext.test(new URL(d.url).pathname)).reduce((a, d) => a + d.bytes, 0);
  return { ms, jsBytes: sum(/\.m?js$/), cssBytes: sum(/\.css$/), requests: done.length };
}

async function oneRun(browser: Browser, baseUrl: string, admin: { email: string; password: string }): Promise<Run> {
  // A new context: no cache, no cookies, no storage.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  try {
    const signInForm = await measureStep(page, async () => {
      await page.goto(`${baseUrl}signin?next=%2FPatient`);
      await page.getByLabel('Email').waitFor({ state: 'visible' });
    });
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(admin.password);
    const patientList = await measureStep(page, async () => {
      await page.getByRole('button', { name: 'Sign in' }).click();
      const table = page.getByRole('table', { name: 'Patient search results' });
      await table.getByText('Benchpatient').first().waitFor({ state: 'visible' });
    });
    return { signInForm, patientList };
  } finally {
    await context.close();
  }
}

/** The built bundle: each file's size and gzipped size, the entry's script named. */
function bundleSizes(): { name: string; bytes: number; gzip: number }[] {
  if (!existsSync(DIST)) return [];
  return readdirSync(DIST)
    .filter((f) => /\.(m?js|css)$/.test(f))
    .map((name) => {
      const content = readFileSync(join(DIST, name));
      return { name, bytes: content.length, gzip: gzipSync(content).length };
    })
    .sort((a, b) => b.gzip - a.gzip);
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export async function runAppBench(
  admin: { email: string; password: string },
  options: { runs: number; baseUrl?: string },
  log: (message: string) => void,
): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    log(`app bench skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or HEARTH_CHROMIUM)`);
    return;
  }
  const server = options.baseUrl ? undefined : await startServer(admin);
  const baseUrl = options.baseUrl ?? (server?.baseUrl as string);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    // Something to draw: patients with names.
    const headers = await signIn(baseUrl, admin.email, admin.password);
    for (let i = 0; i < PATIENTS; i++) {
      await fetch(`${baseUrl}fhir/R4/Patient`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/fhir+json' },
        body: JSON.stringify({ resourceType: 'Patient', name: [{ given: [`P${i}`], family: 'Benchpatient' }] }),
      });
    }
    // One warm-up run (the server's first requests load caches), then the measured ones.
    await oneRun(browser, baseUrl, admin);
    const results: Run[] = [];
    for (let i = 0; i < options.runs; i++) {
      log(`app run ${i + 1} of ${options.runs}...`);
      results.push(await oneRun(browser, baseUrl, admin));
    }
    const med = (pick: (r: Run) => number) => median(results.map(pick));
    const signInJs = med((r) => r.signInForm.jsBytes);
    const listJs = med((r) => r.patientList.jsBytes);
    const lines = [
      '',
      `Hearth app in Chromium, loopback, cold cache (fresh context per run), median of ${options.runs} runs:`,
      '',
      `  time to the sign-in form:                  ${med((r) => r.signInForm.ms).toFixed(0)} ms`,
      `  sign-in to the patient list drawn:         ${med((r) => r.patientList.ms).toFixed(0)} ms`,
      `  script fetched for the sign-in form:       ${kb(signInJs)} (gzipped, as sent)`,
      `  script fetched for the patient list:       ${kb(listJs)} more`,
      `  script for both:                           ${kb(signInJs + listJs)} (budget ${BUDGET_KB} KB: ${
        signInJs + listJs < BUDGET_KB * 1024 ? 'within' : 'OVER'
      })`,
      `  style sheets:                              ${kb(med((r) => r.signInForm.cssBytes + r.patientList.cssBytes))}`,
      `  requests (sign-in form / patient list):    ${med((r) => r.signInForm.requests)} / ${med((r) => r.patientList.requests)}`,
      '',
      'Largest chunks of the built app (gzipped / raw):',
      ...bundleSizes()
        .slice(0, 10)
        .map((f) => `  ${f.name.padEnd(44)} ${kb(f.gzip).padStart(10)} / ${kb(f.bytes)}`),
      '',
    ];
    console.log(lines.join('\n'));
  } finally {
    await browser.close();
    await server?.stop();
  }
}
