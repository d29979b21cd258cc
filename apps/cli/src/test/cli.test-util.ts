/**
 * Test helpers that drive the built CLI (apps/cli/dist/main.js) as a child process: building it
 * when the bundle is missing or older than its sources (with the options of tools/build.mjs), and
 * running it in a temporary HOME with a clean environment.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '../../../..');
export const cliMain = join(repoRoot, 'apps/cli/dist/main.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      newest = Math.max(newest, newestMtime(path));
    } else if (/\.(ts|json)$/.test(entry.name) && !entry.name.includes('.test')) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/** Builds dist/main.js as tools/build.mjs does, when it is missing or stale. */
export async function ensureCliBuilt(): Promise<void> {
  const sources = [
    join(repoRoot, 'apps/cli/src'),
    join(repoRoot, 'packages/core/src'),
    join(repoRoot, 'packages/fhir-types/src'),
  ];
  const newest = Math.max(...sources.map(newestMtime), statSync(join(repoRoot, 'apps/cli/package.json')).mtimeMs);
  if (existsSync(cliMain) && statSync(cliMain).mtimeMs >= newest) {
    return;
  }
  const { build } = await import('esbuild');
  const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] };
  const external = new Set<string>();
  // `!apps/docs`-style patterns exclude a folder from the workspaces.
  const excluded = new Set(root.workspaces.filter((p) => p.startsWith('!')).map((p) => p.slice(1)));
  for (const pattern of root.workspaces.filter((p) => !p.startsWith('!'))) {
    const dir = join(repoRoot, pattern.replace('/*', ''));
    for (const name of readdirSync(dir)) {
      if (excluded.has(`${pattern.replace('/*', '')}/${name}`)) continue;
      const pkgPath = join(dir, name, 'package.json');
      if (existsSync(pkgPath)) {
        const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as Record<string, Record<string, string> | undefined>;
        for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) {
          if (!dep.startsWith('@hearth/')) {
            external.add(dep);
          }
        }
      }
    }
  }
  // Built to a file of its own, then renamed: test files building at once never see half a bundle.
  const temp = `${cliMain}.${process.pid}.${Date.now()}.tmp.js`;
  await build({
    entryPoints: [join(repoRoot, 'apps/cli/src/main.ts')],
    outfile: temp,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    external: [...external],
    banner: {
      js: [
        '#!/usr/bin/env node',
        "import { createRequire as __hearthCreateRequire } from 'node:module'; const require = __hearthCreateRequire(import.meta.url);",
      ].join('\n'),
    },
    logLevel: 'warning',
  });
  renameSync(temp, cliMain);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  home: string;
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
}

/** The environment of a CLI run: this process's, without any HEARTH_* settings, with HOME set. */
function cliEnv(options: CliOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('HEARTH_')) {
      env[key] = value;
    }
  }
  env.HOME = options.home;
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) {
      delete env[key];
    } else {
      env[key] = value;
    }
  }
  return env;
}

export function startCli(
  args: string[],
  options: CliOptions,
): ChildProcessWithoutNullStreams & { output: { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [cliMain, ...args], {
    cwd: options.cwd ?? options.home,
    env: cliEnv(options),
    stdio: 'pipe',
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
  if (options.input !== undefined) {
    child.stdin.end(options.input);
  } else {
    child.stdin.end();
  }
  return Object.assign(child, { output });
}

/** Runs the CLI to the end. */
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  const child = startCli(args, options);
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`hearth ${args.join(' ')} timed out\nstdout: ${child.output.stdout}\nstderr: ${child.output.stderr}`),
      );
    }, 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, ...child.output });
    });
  });
}

/** Resolves once the child's stderr matches. */
export function waitForStderr(
  child: ReturnType<typeof startCli>,
  pattern: RegExp,
  timeoutMs = 20_000,
): Promise<RegExpMatchArray> {
  return new Promise((resolvePromise, reject) => {
    const check = () => {
      const match = child.output.stderr.match(pattern);
      if (match) {
        cleanup();
        resolvePromise(match);
      }
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`stderr never matched ${pattern}: ${child.output.stderr}`));
    }, timeoutMs);
    const onExit = () => {
      check();
      cleanup();
      reject(new Error(`exited before stderr matched ${pattern}: ${child.output.stderr}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stderr.off('data', check);
      child.off('exit', onExit);
    };
    child.stderr.on('data', check);
    child.on('exit', onExit);
    check();
  });
}

/** A temporary HOME for one test file. */
export function tempHome(): { home: string; remove(): void } {
  const home = mkdtempSync(join(tmpdir(), 'hearth-cli-home-'));
  return { home, remove: () => rmSync(home, { recursive: true, force: true }) };
}
