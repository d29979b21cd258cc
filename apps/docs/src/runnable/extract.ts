/**
 * Runnable examples: a fenced block whose info string is `ts runnable` (or `js runnable`) in a
 * guide under docs/ is run by runnable.test.ts against a real Hearth server. Inside a block,
 * `hearth` is a HearthClient signed in as an admin of a fresh project and `baseUrl` is the
 * server's URL; the block checks its results with `node:assert`, so a guide that no longer
 * matches the API fails the tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface RunnableBlock {
  /** The guide, relative to docs/. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
}

const FENCE = /^(`{3,}|~{3,})\s*(ts|typescript|js|javascript)\s+([^\n]*)$/;

/** The runnable blocks of one Markdown text, in order. */
export function extractRunnable(markdown: string, file: string): RunnableBlock[] {
  const lines = markdown.split('\n');
  const blocks: RunnableBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    const end = lines.findIndex((l, j) => j > i && l.trimEnd() === fence);
    if (end < 0) throw new Error(`${file}:${i + 1}: the code block is not closed`);
    if (open[3].split(/\s+/).includes('runnable')) {
      blocks.push({ file, line: i + 1, code: lines.slice(i + 1, end).join('\n') });
    }
    i = end;
  }
  return blocks;
}

/**
 * The block as an ES module: its imports stay at the top, the rest becomes the body of
 * `export default async function ({ hearth, baseUrl })`, so top-level `await` reads as it would
 * in a script.
 */
export function toModule(block: RunnableBlock): string {
  const imports: string[] = [];
  const body: string[] = [];
  for (const line of block.code.split('\n')) {
    (/^import\s/.test(line) ? imports : body).push(line);
  }
  return [
    ...imports,
    `// ${block.file}:${block.line}`,
    'export default async function run({ hearth, baseUrl }) {',
    ...body.map((l) => `  ${l}`),
    '}',
    '',
  ].join('\n');
}

/** Every runnable block of every guide under `docsDir` (its sdk/ folder is TypeDoc output). */
export function collectRunnable(docsDir: string): RunnableBlock[] {
  const out: RunnableBlock[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) {
        if (!(dir === docsDir && name === 'sdk')) walk(full);
      } else if (name.endsWith('.md')) {
        out.push(...extractRunnable(readFileSync(full, 'utf8'), relative(docsDir, full)));
      }
    }
  };
  walk(docsDir);
  return out;
}
