import type { CodeSystemConceptProperty } from '@hearth/core';
import type { Logger } from '../../platform/logger.js';
import type { PoolClient } from '../../platform/postgres.js';
import { hierarchyPropertyCodes, propertyValueText, type ConceptRow } from '../concepts.js';
import type { CodeSystemRow } from '../resolve.js';
import { extendClosure, rebuildClosure } from '../store/closure.js';
import { insertConcepts, insertParentLinks } from '../store/code-systems.js';

/** One concept to import: its code, and whatever else the source gives. */
export interface ImportConcept {
  code: string;
  display?: string;
  definition?: string;
  parents?: string[];
  properties?: CodeSystemConceptProperty[];
  designations?: unknown[];
}

export interface ImportStats {
  concepts: number;
  parentLinks: number;
  hierarchyPairs: number;
  skipped: number;
  ms: number;
}

/** Concepts per multi-row statement (and per progress report). */
const BATCH = 5000;
/** Above this many new links, rebuilding the closure beats extending it link by link. */
const REBUILD_ABOVE = 20_000;

/**
 * Streams concepts into one code system inside the caller's transaction: concepts are merged into
 * existing ones (display, definition, properties), parent links added, and the is-a closure brought
 * up to date at the end. Progress is logged every batch.
 */
export class ConceptImporter {
  private readonly batch = new Map<string, ImportConcept>();
  private readonly newLinks: { child: string; parent: string }[] = [];
  private readonly parentProps: Set<string>;
  private readonly childProps: Set<string>;
  private readonly started = Date.now();
  private concepts = 0;
  private links = 0;
  skipped = 0;

  constructor(
    private readonly client: PoolClient,
    private readonly cs: CodeSystemRow,
    private readonly logger: Logger,
    /** Called after each batch with the concepts written so far (an asynchronous import's progress). */
    private readonly onBatch?: (concepts: number) => Promise<void>,
  ) {
    const props = hierarchyPropertyCodes({ property: cs.propertyDefs as never });
    this.parentProps = props.parent;
    this.childProps = props.child;
  }

  async add(concept: ImportConcept): Promise<void> {
    if (typeof concept.code !== 'string' || concept.code === '') {
      this.skipped++;
      return;
    }
    const existing = this.batch.get(concept.code);
    if (existing) {
      existing.display ??= concept.display;
      existing.definition ??= concept.definition;
      existing.parents = [...(existing.parents ?? []), ...(concept.parents ?? [])];
      existing.properties = [...(existing.properties ?? []), ...(concept.properties ?? [])];
      existing.designations = [...(existing.designations ?? []), ...(concept.designations ?? [])];
    } else {
      this.batch.set(concept.code, { ...concept });
    }
    if (this.batch.size >= BATCH) {
      await this.flush();
    }
  }

  private async flush(): Promise<void> {
    if (this.batch.size === 0) {
      return;
    }
    const rows: ConceptRow[] = [];
    const links: { csId: number; child: string; parent: string }[] = [];
    for (const c of this.batch.values()) {
      rows.push(this.toRow(c, links));
    }
    this.batch.clear();
    await insertConcepts(
      this.client,
      rows.map((row) => ({ csId: this.cs.id, row })),
      true,
    );
    const added = await insertParentLinks(this.client, links);
    this.concepts += rows.length;
    this.links += added;
    if (this.newLinks.length <= REBUILD_ABOVE) {
      this.newLinks.push(...links);
    }
    const ms = Date.now() - this.started;
    this.logger.info(
      {
        system: this.cs.url,
        concepts: this.concepts,
        parentLinks: this.links,
        ms,
        perSecond: Math.round((this.concepts * 1000) / Math.max(ms, 1)),
      },
      'code system import progress',
    );
    await this.onBatch?.(this.concepts);
  }

  private toRow(c: ImportConcept, links: { csId: number; child: string; parent: string }[]): ConceptRow {
    const propertyValues: Record<string, string[]> = {};
    const parents = new Set(c.parents ?? []);
    for (const p of c.properties ?? []) {
      const text = propertyValueText(p);
      if (text === undefined) continue;
      (propertyValues[p.code] ??= []).push(text);
      if (this.parentProps.has(p.code)) {
        parents.add(text);
      } else if (this.childProps.has(p.code)) {
        links.push({ csId: this.cs.id, child: text, parent: c.code });
      }
    }
    parents.delete(c.code);
    for (const parent of parents) {
      links.push({ csId: this.cs.id, child: c.code, parent });
    }
    const isTrue = (k: string) => propertyValues[k]?.includes('true') ?? false;
    const status = propertyValues.status ?? [];
    return {
      code: c.code,
      display: c.display || undefined,
      definition: c.definition || undefined,
      abstract: isTrue('notSelectable') || isTrue('abstract'),
      inactive: isTrue('inactive') || status.includes('retired') || status.includes('inactive'),
      designations: c.designations?.length ? c.designations : undefined,
      properties: c.properties?.length ? c.properties : undefined,
      propertyValues,
      parents: [...parents],
    };
  }

  /** Flushes the last batch, brings the closure up to date and records the new concept count. */
  async finish(): Promise<ImportStats> {
    await this.flush();
    if (this.links > 0) {
      if (this.links > REBUILD_ABOVE || this.newLinks.length > REBUILD_ABOVE) {
        await rebuildClosure(this.client, [this.cs.id]);
      } else {
        await extendClosure(this.client, this.cs.id, this.newLinks);
      }
    }
    const counts = await this.client.query<{ concepts: number; pairs: number }>(
      `SELECT (SELECT count(*) FROM terminology_concept WHERE code_system_id = $1)::int AS concepts,
              (SELECT count(*) FROM terminology_concept_closure WHERE code_system_id = $1)::int AS pairs`,
      [this.cs.id],
    );
    const hierarchyPairs = counts.rows[0].pairs;
    await this.client.query(
      `UPDATE terminology_code_system SET concepts_source = 'import', concept_count = $2 WHERE id = $1`,
      [this.cs.id, counts.rows[0].concepts],
    );
    const stats = {
      concepts: this.concepts,
      parentLinks: this.links,
      hierarchyPairs,
      skipped: this.skipped,
      ms: Date.now() - this.started,
    };
    this.logger.info({ system: this.cs.url, ...stats }, 'code system import done');
    return stats;
  }
}
