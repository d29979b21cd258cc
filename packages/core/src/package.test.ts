/**
 * The published shape of @hearth/core, tested on the build output rather than the sources: the
 * package builds (with @hearth/fhir-types), loads in Node 20 as an ES module and as CommonJS with
 * the same exports, its declarations type-check for ESM and CommonJS consumers (TypeScript's
 * node16 resolution, library checks on) and for bundler consumers, and the built ESM bundles for
 * a browser with no Node built-in.
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(repo, 'node_modules/.bin/tsc');
let consumer: string;

/** Runs a command in the consumer project; resolves with its stdout, or fails with its output. */
function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: consumer, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

beforeAll(() => {
  execFileSync(process.execPath, [join(repo, 'packages/fhir-types/scripts/build.mjs')], { cwd: repo, stdio: 'pipe' });
  execFileSync(process.execPath, [join(repo, 'packages/core/scripts/build.mjs')], { cwd: repo, stdio: 'pipe' });
  // A project outside the workspace that has the two packages (and fhirpath) installed.
  consumer = mkdtempSync(join(tmpdir(), 'hearth-sdk-consumer-'));
  mkdirSync(join(consumer, 'node_modules/@hearth'), { recursive: true });
  symlinkSync(join(repo, 'packages/core'), join(consumer, 'node_modules/@hearth/core'));
  symlinkSync(join(repo, 'packages/fhir-types'), join(consumer, 'node_modules/@hearth/fhir-types'));
  symlinkSync(join(repo, 'node_modules/fhirpath'), join(consumer, 'node_modules/fhirpath'));
}, 240_000);

afterAll(() => {
  if (consumer) {
    rmSync(consumer, { recursive: true, force: true });
  }
});

const probe = `
  const names = Object.keys(sdk).sort();
  const patient = { resourceType: 'Patient', name: [{ given: ['Ada'], family: 'Lovelace' }], birthDate: '1815-12-10' };
  const hearth = new sdk.HearthClient({ baseUrl: 'http://localhost:8103' });
  console.log(JSON.stringify({
    names,
    fhirPath: sdk.evalFhirPath('Patient.name.given', patient),
    name: sdk.formatHumanName(patient.name[0]),
    status: new sdk.OperationOutcomeError(sdk.notFound).status,
    fhirUrl: hearth.fhirUrl('Patient', '1'),
  }));
`;

describe('@hearth/core as built', () => {
  it('loads in Node as an ES module and as CommonJS, with the same exports', () => {
    writeFileSync(join(consumer, 'probe.mjs'), `import * as sdk from '@hearth/core';\n${probe}`);
    writeFileSync(join(consumer, 'probe.cjs'), `const sdk = require('@hearth/core');\n${probe}`);
    const esm = JSON.parse(run(process.execPath, ['probe.mjs'])) as { names: string[] };
    const cjs = JSON.parse(run(process.execPath, ['probe.cjs'])) as { names: string[] };
    expect(esm).toEqual(cjs);
    expect(esm).toMatchObject({
      fhirPath: ['Ada'],
      name: 'Ada Lovelace',
      status: 404,
      fhirUrl: 'http://localhost:8103/fhir/R4/Patient/1',
    });
    for (const name of ['HearthClient', 'parseSearchRequest', 'formatSearchQuery', 'validateResource', 'badRequest']) {
      expect(esm.names).toContain(name);
    }
  });

  it('type-checks in ESM and CommonJS consumers (node16) and in bundler consumers, with real types', () => {
    const usage = `
      import { HearthClient, evalFhirPath, type Patient, type Bundle, type SearchRequest } from '@hearth/core';
      const hearth = new HearthClient({ baseUrl: 'http://localhost:8103/' });
      export async function f(): Promise<string | undefined> {
        const patient: Patient = await hearth.readResource('Patient', '1');
        const bundle: Bundle<Patient> = await hearth.search('Patient', { name: 'smith' });
        const request: SearchRequest = { resourceType: 'Patient', filters: [] };
        // @ts-expect-error: a read of Patient is not an Observation
        const wrong: { resourceType: 'Observation' } = await hearth.readResource('Patient', '1');
        void wrong;
        void request;
        return evalFhirPath<string>('id', patient)[0] ?? bundle.id;
      }
    `;
    writeFileSync(join(consumer, 'esm.mts'), usage);
    writeFileSync(join(consumer, 'cjs.cts'), usage);
    writeFileSync(join(consumer, 'bundler.ts'), usage);
    const common = { strict: true, noEmit: true, skipLibCheck: false, lib: ['ES2022', 'DOM'], types: [] };
    writeFileSync(
      join(consumer, 'tsconfig.node16.json'),
      JSON.stringify({
        compilerOptions: { ...common, module: 'node16', moduleResolution: 'node16' },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    writeFileSync(
      join(consumer, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: { ...common, module: 'es2022', moduleResolution: 'bundler' },
        files: ['bundler.ts'],
      }),
    );
    run(tsc, ['-p', 'tsconfig.node16.json']);
    run(tsc, ['-p', 'tsconfig.bundler.json']);
  });

  it('bundles for the browser from the built ES module, with no Node built-in', async () => {
    writeFileSync(
      join(consumer, 'page.js'),
      "import { HearthClient } from '@hearth/core'; window.Hearth = HearthClient;",
    );
    const result = await build({
      entryPoints: [join(consumer, 'page.js')],
      absWorkingDir: consumer,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('packages/core/dist/esm/index.js'))).toBe(true);
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const imported = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
    expect(imported.filter((path) => builtins.has(path))).toEqual([]);
  });
});
