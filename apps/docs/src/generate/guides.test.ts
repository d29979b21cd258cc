import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED_DOC_ROUTES, SEED_GUIDE_GROUP_ROUTES, SEED_ROUTES } from '../seed-routes.js';
import { guidePages, guideRoute, guideRoutes } from './guides.js';
import { GUIDE_SIDEBAR } from './sidebars.js';

const DOCS = resolve(import.meta.dirname, '../../../../docs');

describe('guides (docs/)', () => {
  const routes = guideRoutes(DOCS);

  it('has a guide for every docs route and guide group the seed lists', () => {
    const generated = new Set(['api/fhir/resources', 'api/fhir/datatypes', 'api/fhir/platform', 'sdk']);
    const missing = SEED_ROUTES.filter((r) => !routes.has(r) && !generated.has(r));
    expect(missing).toEqual([]);
  });

  it('puts every seed docs route and guide in the guides sidebar', () => {
    const ids = JSON.stringify(GUIDE_SIDEBAR);
    for (const route of [...SEED_DOC_ROUTES, ...SEED_GUIDE_GROUP_ROUTES]) {
      const file = routes.get(route) as string;
      const id = file.replace(/\.md$/, '').replace(/^adr\/\d+-/, 'adr/');
      expect(ids, route).toContain(`"${id}"`);
    }
  });

  it('gives generated and GitHub-read pages their route through front matter', () => {
    const config = guidePages(DOCS).find((p) => p.file === 'config.md');
    expect(config?.body).toMatch(/^---\ntitle: "Configuration reference"\nslug: "\/self-hosting\/config-settings"/);
    expect(routes.get('self-hosting/config-settings')).toBe('config.md');
    expect(routes.get('contributing/adr/0001-storage-layout')).toBe('adr/0001-storage-layout.md');
  });

  it('derives routes as Docusaurus does', () => {
    expect(guideRoute('search/index.md', '# Search')).toBe('search');
    expect(guideRoute('search/basic.md', '# Basic')).toBe('search/basic');
    expect(guideRoute('index.md', '---\nslug: "/"\n---\n# Home')).toBe('');
    expect(guideRoute('x/01-intro.md', '# Intro')).toBe('x/intro');
  });
});
