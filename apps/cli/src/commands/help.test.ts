/**
 * `--help` on every command of the built CLI (the command tree is read from the program itself,
 * so a new command is covered without touching this test), and `npx hearth` at the repository
 * root, as the README says.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgram } from '../program.js';
import { ensureCliBuilt, repoRoot, runCli, tempHome } from '../test/cli.test-util.js';

let home: ReturnType<typeof tempHome>;

beforeAll(async () => {
  await ensureCliBuilt();
  home = tempHome();
}, 120_000);
afterAll(() => home?.remove());

/** Every command path of the program: [], ['login'], ['bot', 'create'], ... */
function commandPaths(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [{ path, command }, ...command.commands.flatMap((sub) => commandPaths(sub, [...path, sub.name()]))];
}

describe('hearth --help', () => {
  const all = commandPaths(createProgram());

  it('covers every command the issue names', () => {
    const names = all.map((c) => c.path.join(' '));
    for (const name of [
      'login',
      'logout',
      'whoami',
      'get',
      'post',
      'put',
      'patch',
      'delete',
      'search',
      'import',
      'export',
      'bot create',
      'bot save',
      'bot deploy',
      'bot run',
      'project list',
      'project switch',
      'project invite',
      'profile list',
      'admin stats',
      'admin projects',
      'admin reindex',
      'admin purge',
      'admin migrate-status',
      'admin set-password',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('prints the usage, description and every option of each command, exit code 0', async () => {
    for (const { path, command } of all) {
      const result = await runCli([...path, '--help'], { home: home.home });
      const where = `hearth ${path.join(' ')} --help`;
      expect(result.code, where).toBe(0);
      expect(result.stdout, where).toContain(`Usage: hearth${path.length ? ` ${path.join(' ')}` : ''}`);
      // Help text is wrapped to the width of the terminal: compare with whitespace collapsed.
      const flat = (text: string) => text.replace(/\s+/g, ' ');
      expect(flat(result.stdout), where).toContain(flat(command.description().split('\n')[0]));
      for (const option of command.options) {
        expect(result.stdout, `${where}: ${option.flags}`).toContain(option.long ?? option.flags);
      }
      for (const sub of command.commands) {
        expect(result.stdout, `${where}: ${sub.name()}`).toMatch(new RegExp(`^\\s+${sub.name()}\\b`, 'm'));
      }
    }
  }, 120_000);

  it('answers an unknown command with a hint and a non-zero exit code', async () => {
    const result = await runCli(['no-such-command'], { home: home.home });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("unknown command 'no-such-command'");
    expect(result.stderr).toContain('--help');
  });
});

describe('npx hearth', () => {
  it('runs the built CLI from the repository root', async () => {
    const version = (JSON.parse(readFileSync(join(repoRoot, 'apps/cli/package.json'), 'utf8')) as { version: string })
      .version;
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'hearth', '--version'], {
      cwd: repoRoot,
      env: { ...process.env, HOME: home.home, npm_config_update_notifier: 'false' },
    });
    expect(stdout.trim()).toBe(version);
  }, 60_000);
});
