import type { Coding, HearthClient } from '@hearth/core';
import type { UiMetadata } from '../provider/metadata.js';

/**
 * Codes of a value set matching `filter`: from the server's ValueSet/$expand
 * (hl7.org/fhir/R4/valueset-operation-expand.html), else from the value sets the schema enumerates.
 */
export async function expandValueSet(
  client: HearthClient,
  metadata: UiMetadata | undefined,
  url: string,
  filter: string,
): Promise<Coding[]> {
  try {
    const expanded = await client.valueSetExpand({ url, filter: filter || undefined, count: 20 });
    const codes = (expanded.expansion?.contains ?? []).filter((c) => c.code);
    if (codes.length || !metadata?.valueSets[url]) {
      return codes.map((c) => ({ system: c.system, code: c.code, display: c.display }));
    }
  } catch (err) {
    if (!metadata?.valueSets[url]) {
      throw err;
    }
  }
  const needle = filter.toLowerCase();
  return (metadata?.valueSets[url] ?? [])
    .map((entry) => ({ system: entry.slice(0, entry.lastIndexOf('|')), code: entry.slice(entry.lastIndexOf('|') + 1) }))
    .filter((c) => !needle || c.code.toLowerCase().includes(needle))
    .slice(0, 50);
}

export function codingKey(c: Coding): string {
  return `${c.system ?? ''}|${c.code ?? ''}`;
}

export function codingLabel(c: Coding): string {
  return c.display ? `${c.display} (${c.code})` : (c.code ?? '');
}
