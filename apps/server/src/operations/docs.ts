// docs/operations.md: every $operation of the registry, written by `npm run docs:operations`.
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

/** The page, one row per registration, sorted by name then definition. */
export function renderOperationsReference(registry: OperationRegistry): string {
  const entries = registry
    .all()
    .slice()
    .sort((a, b) => a.name.localeCompare(b.name) || String(a.definition.url).localeCompare(String(b.definition.url)));
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
