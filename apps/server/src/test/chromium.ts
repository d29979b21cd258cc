/** Debian's Chromium for the browser suites (driven by playwright-core), found or required per required.ts. */
import { existsSync } from 'node:fs';
import { requiredForSuite } from './required.js';

export const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Whether the browser suites run: Chromium is installed; missing, they skip locally and fail under CI. */
export function chromiumForSuite(path = CHROMIUM, env: NodeJS.ProcessEnv = process.env): boolean {
  return requiredForSuite(`Chromium (${path})`, existsSync(path), 'apt-get install -y chromium', env);
}
