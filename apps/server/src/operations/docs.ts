// docs/operations.md and docs/operations.json: every $operation of the registry, written by
// `npm run docs:operations`. The JSON feeds the documentation site's per-type reference pages.
import type { OperationEntry, OperationRegistry } from './registry.js';

/** The first sentence of a definition's description, on one line, safe in a table cell. */
function summary(description: string | undefined): string {
  // HL7's descriptions link to pages of the specification relatively: the link text stays.
  const text = (description ?? '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  const end = text.search(/\.(\s|$)/);
  return (end < 0 ? text : text.slice(0, end + 1)).replace(/\|/g, '\\|');
}

function row(entry: OperationEntry): string {
  const systemOnly = entry.levels.length === 1 && entry.levels[0] === 'system';
  const types = entry.resourceTypes?.join(', ') ?? (systemOnly ? '-' : 'any');
  return [
    `\`$${entry.name}\``,
    entry.levels.join(', '),
    types,
    entry.methods.includes('GET') ? 'yes' : 'no',
    `[${entry.definition.id ?? entry.name}](${entry.definition.url})`,
    summary(entry.definition.description),
  ].join(' | ');
}

function sortedEntries(registry: OperationRegistry): OperationEntry[] {
  return registry
    .all()
    .slice()
    .sort((a, b) => a.name.localeCompare(b.name) || String(a.definition.url).localeCompare(String(b.definition.url)));
}

/** One operation as the documentation site reads it (apps/docs: per-type reference pages). */
export interface OperationCatalogEntry {
  name: string;
  levels: string[];
  /** Absent: any resource type. */
  resourceTypes?: string[];
  methods: string[];
  definitionId: string;
  definitionUrl: string;
  description: string;
  affectsState: boolean;
  parameters: { name: string; use: string; min: number; max: string; type?: string; documentation?: string }[];
}

interface DefinitionParameter {
  name?: string;
  use?: string;
  min?: number;
  max?: string;
  type?: string;
  documentation?: string;
}

/** docs/operations.json: the registry as data, in the page's order. */
export function renderOperationsCatalog(registry: OperationRegistry): string {
  const catalog: OperationCatalogEntry[] = sortedEntries(registry).map((e) => ({
    name: e.name,
    levels: [...e.levels],
    ...(e.resourceTypes ? { resourceTypes: [...e.resourceTypes] } : {}),
    methods: [...e.methods],
    definitionId: String(e.definition.id ?? e.name),
    definitionUrl: String(e.definition.url),
    description: summary(e.definition.description),
    affectsState: e.definition.affectsState === true,
    parameters: ((e.definition.parameter ?? []) as unknown as DefinitionParameter[]).map((p) => ({
      name: String(p.name),
      use: String(p.use),
      min: Number(p.min ?? 0),
      max: String(p.max ?? '1'),
      ...(p.type ? { type: p.type } : {}),
      ...(p.documentation ? { documentation: summary(p.documentation) } : {}),
    })),
  }));
  return JSON.stringify(catalog, null, 2) + '\n';
}

/** The page, one row per registration, sorted by name then definition. */
export function renderOperationsReference(registry: OperationRegistry): string {
  const entries = sortedEntries(registry);
  return [
    '# FHIR operations',
    '',
    '<!-- Generated from the OperationRegistry by `npm run docs:operations`; do not edit by hand. -->',
    '',
    'Every `$operation` this server answers under `[base]` = `/fhir/R4`, as its OperationRegistry',
    'holds them (the CapabilityStatement at `[base]/metadata` lists the same). Levels: `system`',
    '(`[base]/$op`), `type` (`[base]/Type/$op`), `instance` (`[base]/Type/{id}/$op`). Operations',
    'that change data take POST only; the others GET too, with their parameters in the query string.',
    'Add an operation by registering it with its OperationDefinition (see `apps/server/src/operations/`).',
    '',
    '| Operation | Levels | Types | GET | Definition | Description |',
    '| --- | --- | --- | --- | --- | --- |',
    ...entries.map((e) => `| ${row(e)} |`),
    '',
  ].join('\n');
}
