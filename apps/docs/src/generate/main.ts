/**
 * Assembles the site's content folder: the guides from docs/, the FHIR reference from the
 * definitions and the operation registry's catalog, the SDK reference from TypeDoc's JSON; and
 * the sidebars. Run by scripts/generate.mjs (bundled with esbuild, before `docusaurus build`).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { OperationCatalogEntry } from '../../../server/src/operations/docs.js';
import { guidePages } from './guides.js';
import { referencePages, slug, type Page } from './reference.js';
import { sdkPages, type TdReflection } from './sdk.js';
import { buildSidebars } from './sidebars.js';

export interface GenerateOptions {
  repoRoot: string;
  /** The folder the docs plugin reads (emptied first). */
  contentDir: string;
  /** TypeDoc's JSON output for packages/core/typedoc.json. */
  typedocJson: string;
  /** Where sidebars.json goes. */
  sidebarsFile: string;
}

export function generate(options: GenerateOptions): { pages: number } {
  const docsDir = join(options.repoRoot, 'docs');
  const ops = JSON.parse(readFileSync(join(docsDir, 'operations.json'), 'utf8')) as OperationCatalogEntry[];
  const reference = referencePages(ops);
  const referenceSlugs = new Map<string, string>([
    ...reference.datatypes.map((n) => [n, `../api/fhir/datatypes/${slug(n)}.md`] as [string, string]),
    ...reference.resources.map((n) => [n, `../api/fhir/resources/${slug(n)}.md`] as [string, string]),
  ]);
  const project = JSON.parse(readFileSync(options.typedocJson, 'utf8')) as TdReflection;
  const sdk = sdkPages(project, referenceSlugs);
  const pages: Page[] = [...guidePages(docsDir), ...reference.pages, ...sdk.pages];

  rmSync(options.contentDir, { recursive: true, force: true });
  for (const page of pages) {
    const file = join(options.contentDir, page.file);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, page.body);
  }
  const sidebars = buildSidebars({
    resources: reference.resources,
    platform: reference.platform,
    datatypes: reference.datatypes,
    sdk: sdk.symbols,
  });
  mkdirSync(dirname(options.sidebarsFile), { recursive: true });
  writeFileSync(options.sidebarsFile, JSON.stringify(sidebars, null, 1));
  return { pages: pages.length };
}
