import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
// Inside the repository (ignored by git), so the bundle finds pino in node_modules.
const dir = resolve(here, '../../../../.hearth-test', `logger-${process.pid}`);

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: [resolve(here, 'logger.ts')],
    outfile: resolve(dir, 'logger.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function linesOf(script: string): Promise<Record<string, unknown>[]> {
  const file = resolve(dir, `run-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, `import { createLogger, flushLogger } from './logger.mjs';\n${script}`);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { maxBuffer: 64 * 1024 * 1024 });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

it('writes stdout asynchronously yet loses no line when the process exits right after logging', async () => {
  const lines = await linesOf(`
    const logger = createLogger('info');
    for (let i = 0; i < 20000; i++) logger.info({ i, pad: 'x'.repeat(200) }, 'line');
    process.exit(0);
  `);
  expect(lines).toHaveLength(20000);
  expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 20000 }, (_, i) => i));
});

it('flushLogger waits for what was logged, and secrets are redacted', async () => {
  const lines = await linesOf(`
    const logger = createLogger('info');
    logger.info({ password: 'hunter2', req: { headers: { authorization: 'Bearer abc' } } }, 'signed in');
    // A long line: its write is surely still in flight when flushLogger is called.
    logger.info({ pad: 'x'.repeat(4 * 1024 * 1024) }, 'long');
    await flushLogger(logger);
    process.stdout.write(JSON.stringify({ after: true }) + '\\n');
  `);
  expect(lines[0]).toMatchObject({ msg: 'signed in', password: '***', req: { headers: { authorization: '***' } } });
  expect(lines[1]).toMatchObject({ msg: 'long' });
  expect(lines[2]).toEqual({ after: true });
});

it('HEARTH_LOG_FORMAT: pretty for a developer at a terminal, JSON for everyone else, unless set', async () => {
  const { logFormatOf } = await import('./logger.js');
  expect(logFormatOf('', {}, true)).toBe('pretty');
  expect(logFormatOf('', { NODE_ENV: 'production' }, true)).toBe('json');
  expect(logFormatOf('', {}, false)).toBe('json');
  expect(logFormatOf('json', {}, true)).toBe('json');
  expect(logFormatOf('Pretty', { NODE_ENV: 'production' }, false)).toBe('pretty');
  expect(() => logFormatOf('xml', {}, true)).toThrow(/HEARTH_LOG_FORMAT/);
});

it('the pretty format writes one readable line per entry, with the request fields, secrets still redacted', async () => {
  const file = resolve(dir, `pretty-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    file,
    `import { createLogger, flushLogger, logDestination } from './logger.mjs';
     const logger = createLogger('info', await logDestination('pretty'));
     logger.info({ reqId: 'r-1', interaction: 'read', password: 'hunter2' }, 'request');`,
  );
  const { stdout } = await promisify(execFile)(process.execPath, [file], { env: { ...process.env, NO_COLOR: '1' } });
  expect(() => JSON.parse(stdout.split('\n')[0])).toThrow();
  expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request \{/);
  expect(stdout.trim().split('\n')).toHaveLength(1);
  expect(stdout).toContain('"interaction":"read"');
  expect(stdout).not.toContain('hunter2');
});
