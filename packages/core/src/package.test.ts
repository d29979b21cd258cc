/**
 * The published shape of @hearth/core, tested on the build output rather than the sources: the
 * package builds (with @hearth/fhir-types), loads in Node 20 as an ES module and as CommonJS with
 * the same exports, its declarations type-check for ESM and CommonJS consumers (TypeScript's
 * node16 resolution, library checks on) and for bundler consumers, and the built ESM bundles for
 * a browser with no Node built-in. TypeDoc writes the API reference (`npm run docs:sdk`) from the
 * TSDoc comments without a warning.
 */
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(repo, 'node_modules/.bin/tsc');
let consumer: string;

/**
 * Runs a command (in the consumer project unless told); resolves with its stdout, or fails with
 * its output. Asynchronous: a blocked test worker would miss the runner's heartbeats.
 */
async function run(command: string, args: string[], cwd = consumer): Promise<string> {
  try {
    return (await promisify(execFile)(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

beforeAll(async () => {
  await run(process.execPath, [join(repo, 'packages/fhir-types/scripts/build.mjs')], repo);
  await run(process.execPath, [join(repo, 'packages/core/scripts/build.mjs')], repo);
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
  it('loads in Node as an ES module and as CommonJS, with the same exports', async () => {
    writeFileSync(join(consumer, 'probe.mjs'), `import * as sdk from '@hearth/core';\n${probe}`);
    writeFileSync(join(consumer, 'probe.cjs'), `const sdk = require('@hearth/core');\n${probe}`);
    const esm = JSON.parse(await run(process.execPath, ['probe.mjs'])) as { names: string[] };
    const cjs = JSON.parse(await run(process.execPath, ['probe.cjs'])) as { names: string[] };
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

  it('type-checks in ESM and CommonJS consumers (node16) and in bundler consumers, with real types', async () => {
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
    await run(tsc, ['-p', 'tsconfig.node16.json']);
    await run(tsc, ['-p', 'tsconfig.bundler.json']);
  }, 120_000);

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

describe('API reference', () => {
  it('is generated by TypeDoc from the TSDoc comments, with no warning, every client method documented', async () => {
    const out = mkdtempSync(join(tmpdir(), 'hearth-sdk-docs-'));
    try {
      const typedoc = join(repo, 'node_modules/.bin/typedoc');
      await run(
        typedoc,
        [
          ...['--options', 'packages/core/typedoc.json', '--treatWarningsAsErrors'],
          ...['--out', join(out, 'html'), '--json', join(out, 'api.json')],
        ],
        repo,
      );
      interface Reflection {
        name: string;
        kind: number;
        children?: Reflection[];
        signatures?: { comment?: unknown }[];
      }
      const api = JSON.parse(readFileSync(join(out, 'api.json'), 'utf8')) as Reflection;
      expect(api.children?.map((m) => m.name).sort()).toEqual(['@hearth/core', '@hearth/fhir-types']);
      const core = api.children?.find((m) => m.name === '@hearth/core');
      const client = core?.children?.find((c) => c.name === 'HearthClient');
      const METHOD = 2048;
      const methods = client?.children?.filter((c) => c.kind === METHOD) ?? [];
      expect(methods.map((m) => m.name)).toEqual(
        expect.arrayContaining(['signInWithPassword', 'createBinary', 'searchResourcePages', 'executeBot']),
      );
      expect(methods.filter((m) => !m.signatures?.some((s) => s.comment)).map((m) => m.name)).toEqual([]);
      expect(existsSync(join(out, 'html', 'classes'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 240_000);
});
