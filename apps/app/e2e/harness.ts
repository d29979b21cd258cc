/**
 * End-to-end support: Debian's Chromium through playwright-core, a real server from
 * createTestApp() serving the built app.
 */
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export { CHROMIUM, CHROMIUM_ARGS, chromiumForSuite } from '../../server/src/test/chromium.js';
import { runToEnd } from '../../server/src/test/process.js';
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const screenshotDir = join(repoRoot, 'artifacts', 'screenshots');

/** The newest modification time of any file under the given paths. */
function newestMtime(paths: string[]): number {
  let newest = 0;
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path)) if (name !== 'node_modules' && name !== 'dist') visit(join(path, name));
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  paths.forEach(visit);
  return newest;
}

/** Builds apps/app/dist when it is missing or older than its sources, so the server serves this app. */
export async function ensureAppBuilt(): Promise<void> {
  const index = join(repoRoot, 'apps', 'app', 'dist', 'index.html');
  const sources = [
    'apps/app/src',
    'apps/app/index.html',
    'apps/app/vite.config.ts',
    'packages/react/src',
    'packages/core/src',
  ].map((p) => join(repoRoot, p));
  if (!existsSync(index) || statSync(index).mtimeMs < newestMtime(sources)) {
    await runToEnd(process.execPath, [join(repoRoot, 'apps', 'app', 'build.mjs')], {
      cwd: repoRoot,
      inheritOutput: true,
    });
  }
  mkdirSync(screenshotDir, { recursive: true });
}
