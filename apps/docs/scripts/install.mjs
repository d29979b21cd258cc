// Installs the site's own dependencies (apps/docs is kept out of the root workspaces: its ~1,300
// packages would slow down every `npm ci`), once, and again whenever its lockfile changes.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const site = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const installed = join(site, 'node_modules', '.package-lock.json');
const lock = join(site, 'package-lock.json');

if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  console.log('docs: installing the site dependencies (npm ci in apps/docs)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(npm, ['ci', '--no-audit', '--no-fund', '--workspaces=false'], { cwd: site, stdio: 'inherit' });
}
