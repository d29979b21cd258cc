/**
 * The browser entry must bundle for a browser: no Node built-ins anywhere in what it imports.
 * esbuild with platform 'browser' fails on any `node:` import or Node-only package it meets.
 */
import { build } from 'esbuild';
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const entry = fileURLToPath(new URL('./index.ts', import.meta.url));

describe('browser entry', () => {
  it('bundles for the browser with no Node built-in imports', async () => {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      conditions: ['source'],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const imported = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
    expect(imported.filter((path) => builtins.has(path))).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.endsWith('client/client.ts'))).toBe(true);
    expect(inputs.some((path) => path.includes('node_modules/fhirpath/'))).toBe(true);
    const code = result.outputFiles[0].text;
    expect(code).toContain('HearthClient');
    expect(code).not.toMatch(/require\(["']node:/);
  });
});
