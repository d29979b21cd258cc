/**
 * Every `hearth ...` command the guides show (docs/**.md: fenced blocks and inline code) exists,
 * with the options it is shown with: a renamed command or option fails here, not in a reader's shell.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../program.js';
import { repoRoot } from '../test/cli.test-util.js';

const DOCS = join(repoRoot, 'docs');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // docs/sdk is TypeDoc output.
    if (statSync(path).isDirectory()) return name === 'sdk' ? [] : markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The code of a guide: its fenced blocks' lines and its inline code spans, with their line numbers. */
function codeOf(markdown: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(text);
    if (open && (!fence || text.trim() === fence)) {
      fence = fence ? undefined : open[1];
      return;
    }
    if (fence) {
      out.push({ line: i + 1, text });
    } else {
      for (const span of text.matchAll(/`([^`]+)`/g)) out.push({ line: i + 1, text: span[1] });
    }
  });
  return out;
}

/** The words of each `hearth` command in a line of code, up to the end of that command (a pipe, `&&`, `;`, a comment). */
export function hearthCommands(text: string): string[][] {
  const commands: string[][] = [];
  // `npx hearth ...` anywhere; a bare `hearth ...` only where a command starts (not `sudo -u hearth npm ci`).
  for (const match of text.matchAll(/(?:(?:^|\s)npx\s+|^\s*(?:\$\s+)?|(?:\||&&|;)\s*)hearth\s+([a-z-][^|;&#]*)/g)) {
    const words = (match[1].match(/'[^']*'|"[^"]*"|\S+/g) ?? []).filter((w) => w !== '\\');
    commands.push(words);
  }
  return commands;
}

/** What is wrong with a documented command, or undefined when the program has it. */
export function problemWith(program: Command, words: string[]): string | undefined {
  let command = program;
  let i = 0;
  for (; i < words.length; i++) {
    const sub = command.commands.find((c) => c.name() === words[i] || c.aliases().includes(words[i]));
    if (!sub) break;
    command = sub;
  }
  if (command === program) return `no command '${words[0]}'`;
  const next = words[i];
  if (command.commands.length > 0 && next !== undefined && /^[a-z]/.test(next)) {
    return `no command '${[...ancestry(command), next].join(' ')}'`;
  }
  const known = new Set(['--help', '-h']);
  for (let c: Command | null = command; c; c = c.parent) {
    for (const o of c.options) {
      if (o.long) known.add(o.long);
      if (o.short) known.add(o.short);
      // --no-x options of commander are listed as such; --x is accepted too.
      if (o.long?.startsWith('--no-')) known.add(`--${o.long.slice(5)}`);
    }
  }
  for (const word of words.slice(i)) {
    const option = /^(--?[a-zA-Z][\w-]*)/.exec(word)?.[1];
    if (option && !known.has(option)) return `'${ancestry(command).join(' ')}' has no option ${option}`;
  }
  return undefined;
}

function ancestry(command: Command): string[] {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names;
}

describe('hearth commands in the guides', () => {
  const program = createProgram();
  const documented = markdownFiles(DOCS).flatMap((file) =>
    codeOf(readFileSync(file, 'utf8')).flatMap(({ line, text }) =>
      hearthCommands(text).map((words) => ({ where: `${relative(DOCS, file)}:${line}`, words })),
    ),
  );

  it('finds the commands of the CLI page and the super admin guide', () => {
    const shown = (file: string) => documented.filter((d) => d.where.startsWith(`${file}:`)).map((d) => d.words[0]);
    expect(new Set(shown('cli.md'))).toEqual(
      new Set(['login', 'whoami', 'get', 'search', 'import', 'export', 'bot', 'project', 'profile', 'admin']),
    );
    const admin = documented
      .filter((d) => d.where.startsWith('self-hosting/super-admin.md:') && d.words[0] === 'admin')
      .map((d) => d.words[1])
      .filter((w) => /^[a-z]/.test(w));
    expect(new Set(admin)).toEqual(
      new Set(['stats', 'projects', 'reindex', 'purge', 'migrate-status', 'migrate', 'set-password']),
    );
  });

  it('are commands of the program, with its options', () => {
    const problems = documented
      .map((d) => ({ ...d, problem: problemWith(program, d.words) }))
      .filter((d) => d.problem)
      .map((d) => `${d.where}: hearth ${d.words.join(' ')}: ${d.problem}`);
    expect(problems).toEqual([]);
  });

  it('tells a missing command or option', () => {
    expect(problemWith(program, ['admin', 'reindex', '--type', 'Patient'])).toBeUndefined();
    expect(problemWith(program, ['--profile', 'x'])).toBe("no command '--profile'");
    expect(problemWith(program, ['admin', 'reindx'])).toBe("no command 'admin reindx'");
    expect(problemWith(program, ['admin', 'purge', 'Login', '--older-than', '3d'])).toBe(
      "'admin purge' has no option --older-than",
    );
    expect(problemWith(program, ['admin', 'set-password', 'a@example.org', '--profile', 'ops'])).toBeUndefined();
    expect(hearthCommands('npx hearth get Patient/123   # also post | put')).toEqual([['get', 'Patient/123']]);
    expect(hearthCommands('printf \'%s\\n\' "$P" | npx hearth admin set-password ada@example.org')).toEqual([
      ['admin', 'set-password', 'ada@example.org'],
    ]);
  });
});
