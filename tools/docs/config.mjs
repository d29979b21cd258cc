// npm run docs:config: writes docs/config.md from apps/server/src/config/schema.ts (the one place
// where every configuration key is declared), through renderConfigReference in config/docs.ts.
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';

const result = await build({
  entryPoints: ['apps/server/src/config/docs.ts'],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'node',
  logLevel: 'warning',
});
const source = result.outputFiles[0].text;
const { renderConfigReference } = await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);
writeFileSync('docs/config.md', renderConfigReference());
console.log('wrote docs/config.md');
