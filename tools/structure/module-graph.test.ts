import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkFileCycles, checkLayers, readImports, sourceFiles, type LayerRule } from './module-graph.js';

/** A throwaway tree: path -> source text. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  roots.push(root);
  return root;
}
const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

const RULE: LayerRule = {
  layers: { low: 0, mid: 1, peer: 1, top: 2 },
  moduleOf: (file) => (file.endsWith('.test.ts') ? undefined : file.split('/')[0]),
  forbiddenPackages: (module) => (module === 'top' ? undefined : /^fastify$|^@hearth\/[^/]+\/./),
};

function check(files: Record<string, string>) {
  const root = tree(files);
  const imports = readImports(
    root,
    sourceFiles(root, () => true),
  );
  return { layers: checkLayers(imports, RULE), files: checkFileCycles(imports) };
}

describe('module graph checks', () => {
  it('passes a tree whose imports point down', () => {
    const result = check({
      'top/a.ts': "import { b } from '../mid/b.js';\nimport fastify from 'fastify';\nexport const a = b;",
      'mid/b.ts': "import { c } from '../low/c.js';\nexport const b = c;",
      'low/c.ts': 'export const c = 1;',
      'mid/b.test.ts': "import { a } from '../top/a.js';",
    });
    expect(result.layers).toEqual([]);
    expect(result.files).toEqual([]);
  });

  it('fails an import that points up, naming both files and layers', () => {
    const result = check({
      'low/c.ts': "import type { B } from '../mid/b.js';\nexport const c = 1;",
      'mid/b.ts': 'export type B = number;',
    });
    expect(result.layers.map((v) => v.kind)).toEqual(['upward']);
    expect(result.layers[0].message).toContain('low/c.ts (low, layer 0) imports mid/b.ts (mid, layer 1)');
  });

  it('fails a forbidden package and a deep import, but not in comments or strings', () => {
    const result = check({
      'mid/b.ts': [
        "// import x from 'fastify';",
        'const s = "import y from \'fastify\'";',
        "export { default as f } from 'fastify';",
        "import { z } from '@hearth/core/src/z.js';",
      ].join('\n'),
    });
    expect(result.layers.map((v) => v.message)).toEqual([
      'mid/b.ts imports fastify, which module "mid" may not use',
      'mid/b.ts imports @hearth/core/src/z.js, which module "mid" may not use',
    ]);
  });

  it('fails a module that has no layer', () => {
    const result = check({ 'stray/x.ts': "import { c } from '../low/c.js';", 'low/c.ts': 'export const c = 1;' });
    expect(result.layers.map((v) => v.kind)).toEqual(['unplaced']);
  });

  it('fails modules of one layer that import each other, and files in a circle', () => {
    const result = check({
      'mid/b.ts': "import { p } from '../peer/p.js';\nexport const b = 1;",
      'peer/p.ts': "export const p = 2;\nexport async function q() { return import('../mid/b.js'); }",
    });
    expect(result.layers.map((v) => v.kind)).toEqual(['module-cycle']);
    expect(result.layers[0].message).toContain('mid -> peer (mid/b.ts -> peer/p.ts)');
    expect(result.files.map((v) => v.message)).toEqual(['files import each other: mid/b.ts, peer/p.ts']);
  });

  it('finds a circle of three files inside one module', () => {
    const result = check({
      'low/a.ts': "export * from './b.js';",
      'low/b.ts': "export * from './c.js';",
      'low/c.ts': "import './a.js';",
      'low/d.ts': "import './a.js';",
    });
    expect(result.layers).toEqual([]);
    expect(result.files.map((v) => v.message)).toEqual(['files import each other: low/a.ts, low/b.ts, low/c.ts']);
  });
});
