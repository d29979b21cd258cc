/**
 * Every workspace says which of the repository's packages it uses, so that npm links them and a
 * consumer outside the monorepo installs what it needs: a library (packages/*) lists a @hearth/*
 * package its sources import among its dependencies (one its tests alone import may be a
 * devDependency); an app (apps/*, tests/*) bundles the workspace packages it imports into its build
 * (tools/build.mjs), so it may list them as devDependencies.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../', import.meta.url));
const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] } & Deps;

interface Deps {
  name?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function workspaces(): string[] {
  // `!apps/docs`-style patterns exclude a folder (the docs site has its own install and lockfile).
  const excluded = new Set(root.workspaces.filter((p) => p.startsWith('!')).map((p) => p.slice(1)));
  return root.workspaces
    .filter((p) => !p.startsWith('!'))
    .flatMap((pattern) => {
      const dir = pattern.replace('/*', '');
      return readdirSync(join(repo, dir))
        .map((name) => `${dir}/${name}`)
        .filter((path) => {
          if (excluded.has(path)) return false;
          try {
            return statSync(join(repo, path, 'package.json')).isFile();
          } catch {
            return false;
          }
        });
    });
}

function sourceFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The workspace packages a file imports or re-exports (static, type and dynamic imports), by name. */
function importedWorkspacePackages(text: string): string[] {
  const statics = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'(@hearth\/[a-z-]+)/gm)];
  const dynamics = [...text.matchAll(/\bimport\(\s*'(@hearth\/[a-z-]+)/g)];
  return [...statics, ...dynamics].map((m) => m[1]);
}

const isTest = (path: string): boolean => /\.test\.tsx?$|\/test\/|\/e2e\//.test(path);

describe('workspace dependencies', () => {
  for (const ws of workspaces()) {
    it(`${ws} declares every workspace package it imports`, () => {
      const pkg = JSON.parse(readFileSync(join(repo, ws, 'package.json'), 'utf8')) as Deps;
      const runtime = new Set([
        pkg.name,
        ...Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies }),
      ]);
      const forTests = new Set([...runtime, ...Object.keys({ ...pkg.devDependencies })]);
      const missing = new Set<string>();
      for (const file of sourceFiles(join(repo, ws, 'src'))) {
        const allowed = isTest(file) || !ws.startsWith('packages/') ? forTests : runtime;
        for (const name of importedWorkspacePackages(readFileSync(file, 'utf8'))) {
          if (!allowed.has(name)) {
            missing.add(`${name} (${file.slice(repo.length)})`);
          }
        }
      }
      expect([...missing]).toEqual([]);
    });
  }
});
