import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigReference } from './docs.js';
import { configSchema } from './schema.js';

const PAGE = resolve(import.meta.dirname, '../../../../docs/config.md');

describe('docs/config.md', () => {
  it('is up to date with config/schema.ts (run `npm run docs:config` after changing a key)', () => {
    expect(readFileSync(PAGE, 'utf8')).toBe(renderConfigReference());
  });

  it('documents every key with its environment variable, including the ones operators rely on', () => {
    const page = renderConfigReference();
    for (const spec of Object.values(configSchema)) {
      expect(page).toContain(`\`${spec.env}\``);
    }
    for (const env of [
      'PORT',
      'DATABASE_URL',
      'HEARTH_DATA_DIR',
      'HEARTH_BASE_URL',
      'HEARTH_ADMIN_EMAIL',
      'HEARTH_ADMIN_PASSWORD',
    ]) {
      expect(page).toContain(`| \`${env}\` |`);
    }
  });
});
