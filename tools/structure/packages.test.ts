// The workspaces' layer rule (ARCHITECTURE.md): fhir-types -> definitions -> core -> react -> apps.
// A package imports only packages below it, through their public entry (no deep imports), and no
// workspace reaches into another's files by a relative path.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayers, readImports, sourceFiles, type LayerRule } from './module-graph.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const WORKSPACE_LAYERS: Record<string, number> = {
  'fhir-types': 0,
  definitions: 1,
  core: 2,
  react: 3,
  server: 4,
  app: 4,
  cli: 4,
  agent: 4,
  compat: 5,
  // The docs site's generator reads the definitions, the SDK's TypeDoc JSON and the operations catalog.
  docs: 5,
};

/** The package each workspace is published as. */
const PACKAGE_OF: Record<string, string> = {
  'fhir-types': '@hearth/fhir-types',
  definitions: '@hearth/definitions',
  core: '@hearth/core',
  react: '@hearth/react',
  server: '@hearth/server',
  app: '@hearth/app',
  cli: '@hearth/cli',
  compat: '@hearth/compat-tests',
};

function workspaceOf(file: string): string | undefined {
  if (/\.test\.tsx?$/.test(file) || /(^|\/)test\//.test(file)) return undefined;
  const m = /^(?:packages|apps|tests)\/([^/]+)\/(?:src|e2e)\//.exec(file);
  return m ? m[1] : undefined;
}

/** Any @hearth package at or above the workspace's own layer (its own name aside), or any deep import. */
function forbiddenFor(workspace: string): RegExp {
  const layer = WORKSPACE_LAYERS[workspace];
  const notBelow = Object.entries(WORKSPACE_LAYERS)
    .filter(([name, l]) => l >= layer && name !== workspace && PACKAGE_OF[name])
    .map(([name]) => PACKAGE_OF[name].replace('/', '\\/'));
  const above = notBelow.length ? `^(${notBelow.join('|')})$|` : '';
  return new RegExp(`${above}^@hearth\\/[^/]+\\/.`);
}

const RULE: LayerRule = {
  layers: WORKSPACE_LAYERS,
  moduleOf: workspaceOf,
  forbiddenPackages: forbiddenFor,
};

describe('workspace layers', () => {
  const files = sourceFiles(
    ROOT,
    (file) => /^(packages|apps|tests)\//.test(file) && !file.includes('/dist/') && workspaceOf(file) !== undefined,
  );
  const imports = readImports(ROOT, files);

  it('reads every workspace', () => {
    const seen = new Set(files.map(workspaceOf));
    for (const name of ['fhir-types', 'definitions', 'core', 'react', 'server', 'app', 'cli']) {
      expect(seen, name).toContain(name);
    }
  });

  it('packages import only packages below them, through their entry point', () => {
    expect(checkLayers(imports, RULE).map((v) => v.message)).toEqual([]);
  });

  it('the rule refuses an import up the layers and a deep import', () => {
    expect(forbiddenFor('core').test('@hearth/react')).toBe(true);
    expect(forbiddenFor('core').test('@hearth/definitions')).toBe(false);
    expect(forbiddenFor('react').test('@hearth/core/src/client.js')).toBe(true);
    expect(forbiddenFor('app').test('@hearth/server')).toBe(true);
  });
});
