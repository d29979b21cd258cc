// cql-execution's TerminologyProvider over Hearth's terminology: every value set the libraries
// declare is expanded (as the caller sees the terminology) before the engine runs, so the engine's
// synchronous lookups are answered from memory. The expansions are kept between evaluations while
// no terminology is written (measure-cache.ts).
import { fail, unprocessable } from '@hearth/core';
import type { TerminologyProvider, ValueSet } from 'cql-execution';
import { IndexedValueSet } from './cql-data.js';
import { splitCanonical } from './library.js';

/** A value set's codes as the caller sees them (`$expand`): undefined system allowed. */
export type ValueSetExpander = (url: string) => Promise<{ system?: string; code: string; version?: string }[]>;

export class ExpandedValueSets implements TerminologyProvider {
  private readonly byUrl = new Map<string, IndexedValueSet>();

  /** Expands every url; a value set Hearth does not hold (or cannot expand) is a 422 naming it. */
  static async load(urls: string[], expand: ValueSetExpander): Promise<ExpandedValueSets> {
    const sets = new ExpandedValueSets();
    for (const canonical of urls) {
      const { url, version } = splitCanonical(canonical);
      let codes: Awaited<ReturnType<ValueSetExpander>>;
      try {
        codes = await expand(canonical);
      } catch (err) {
        const text = (err as { outcome?: { issue?: { diagnostics?: string }[] } }).outcome?.issue?.[0]?.diagnostics;
        fail(
          unprocessable(
            `The measure's value set ${canonical} cannot be expanded: ${text ?? (err as Error).message}. Load it (with its expansion or compose) with the measure`,
            'ValueSet',
          ),
        );
      }
      sets.byUrl.set(
        url,
        new IndexedValueSet(
          url,
          version,
          codes.map((c) => ({ code: c.code, system: c.system, version: c.version })),
        ),
      );
    }
    return sets;
  }

  findValueSetsByOid(oid: string): ValueSet[] {
    const vs = this.byUrl.get(oid);
    return vs ? [vs] : [];
  }

  findValueSet(oid: string): ValueSet | null {
    return this.byUrl.get(splitCanonical(oid).url) ?? null;
  }

  /** The code strings of a value set (by url, a version ignored); undefined when it is not one of these. */
  codeStrings(canonical: string): Set<string> | undefined {
    return this.byUrl.get(splitCanonical(canonical).url)?.codeStrings;
  }

  get size(): number {
    return this.byUrl.size;
  }
}
