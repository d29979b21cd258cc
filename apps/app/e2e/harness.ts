/**
 * End-to-end support: Debian's Chromium through playwright-core, a real server from
 * createTestApp() serving the built app, and helpers to probe which server features exist.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const screenshotDir = join(repoRoot, 'artifacts', 'screenshots');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** Builds apps/app/dist when it is missing, so that the server has an app to serve. */
export function ensureAppBuilt(): void {
  if (!existsSync(join(repoRoot, 'apps', 'app', 'dist', 'index.html'))) {
    execFileSync(process.execPath, [join(repoRoot, 'apps', 'app', 'build.mjs')], { stdio: 'inherit', cwd: repoRoot });
  }
  mkdirSync(screenshotDir, { recursive: true });
}

/**
 * True when the server has a route for `method path` (anything but the router's own 404,
 * whose message starts 'No route for').
 */
export async function hasRoute(baseUrl: string, method: string, path: string, body: unknown = {}): Promise<boolean> {
  const res = await fetch(new URL(path, baseUrl), {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: method === 'GET' ? undefined : JSON.stringify(body),
  });
  if (res.status !== 404) return true;
  const text = await res.text();
  return !text.includes('No route for');
}
