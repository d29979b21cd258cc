/**
 * .ci/install-services installs Chromium, redis-server and DCMTK from the distribution when they are
 * missing, so that CI (where a missing one fails the suites that need it) runs every suite. Run here
 * with a fake apt-get and sudo on a PATH of their own: nothing is installed or removed on this machine.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '..', '.ci', 'install-services');
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A PATH holding only `id`, `env`, a logging apt-get and sudo, and the given fake commands. */
function fakeMachine(commands: string[]): { bin: string; log: string } {
  const bin = mkdtempSync(join(tmpdir(), 'hearth-ci-'));
  dirs.push(bin);
  const log = join(bin, 'calls.log');
  for (const tool of ['id', 'env'])
    symlinkSync(
      spawnSync('sh', ['-c', `command -v ${tool}`])
        .stdout.toString()
        .trim(),
      join(bin, tool),
    );
  const write = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  write('apt-get', `echo "apt-get $*" >> "${log}"`);
  write('sudo', `echo "sudo" >> "${log}"; exec "$@"`);
  for (const name of commands) write(name, 'exit 0');
  writeFileSync(log, '');
  return { bin, log };
}

function run(bin: string, chromium: string) {
  return spawnSync('/bin/bash', [script], {
    env: { PATH: bin, HEARTH_CHROMIUM: chromium },
    encoding: 'utf8',
  });
}

describe('.ci/install-services', () => {
  it('installs chromium, redis-server and dcmtk from the distribution when all are missing', () => {
    const { bin, log } = fakeMachine([]);
    const result = run(bin, '/nonexistent/chromium');
    expect(result.status).toBe(0);
    const calls = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('apt-get'));
    expect(calls).toEqual(['apt-get update', 'apt-get install -y chromium redis-server dcmtk']);
  });

  it('installs only what is missing', () => {
    const { bin, log } = fakeMachine(['redis-server', 'storescu']);
    expect(run(bin, '/nonexistent/chromium').status).toBe(0);
    expect(readFileSync(log, 'utf8')).toContain('apt-get install -y chromium\n');
  });

  it('installs nothing when the browser, redis-server and DCMTK are there', () => {
    const { bin, log } = fakeMachine(['redis-server', 'storescu']);
    // Any executable stands in for the browser: only its presence is checked.
    expect(run(bin, process.execPath).status).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('');
  });

  it('fails when the installation fails', () => {
    const { bin } = fakeMachine([]);
    writeFileSync(join(bin, 'apt-get'), '#!/bin/sh\nexit 100\n');
    expect(run(bin, '/nonexistent/chromium').status).not.toBe(0);
  });
});

describe('.ci/run', () => {
  it('runs the suites as CI and installs the services before the tests', () => {
    const text = readFileSync(join(import.meta.dirname, '..', '.ci', 'run'), 'utf8');
    expect(text).toMatch(/export CI="\$\{CI:-true\}"/);
    expect(text.indexOf('.ci/install-services')).toBeGreaterThan(-1);
    expect(text.indexOf('.ci/install-services')).toBeLessThan(text.indexOf('npm test'));
  });
});
