import { describe, expect, it } from 'vitest';
import { extractRunnable, toModule } from './extract.js';

const page = [
  '# A guide',
  '',
  '```ts runnable',
  "import assert from 'node:assert/strict';",
  "const p = await hearth.createResource({ resourceType: 'Patient' });",
  "assert.equal(p.resourceType, 'Patient');",
  '```',
  '',
  '```ts',
  'not run',
  '```',
  '',
  '````js runnable title="x"',
  '```',
  'inner fence',
  '````',
].join('\n');

describe('runnable blocks', () => {
  it('finds only blocks marked runnable, with their lines, across fence lengths', () => {
    const blocks = extractRunnable(page, 'guide.md');
    expect(blocks.map((b) => b.line)).toEqual([3, 13]);
    expect(blocks[0].code).toContain("createResource({ resourceType: 'Patient' })");
    expect(blocks[1].code).toBe('```\ninner fence');
  });

  it('keeps imports at the top and wraps the rest in an async function of hearth and baseUrl', () => {
    const module = toModule(extractRunnable(page, 'guide.md')[0]);
    expect(module.split('\n')[0]).toBe("import assert from 'node:assert/strict';");
    expect(module).toContain('export default async function run({ hearth, baseUrl }) {');
    expect(module).toContain("  assert.equal(p.resourceType, 'Patient');");
    expect(module).toContain('// guide.md:3');
  });

  it('refuses a block that is never closed', () => {
    expect(() => extractRunnable('```ts runnable\nx', 'open.md')).toThrow('open.md:1');
  });
});
