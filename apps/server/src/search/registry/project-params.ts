import type { Queryable } from '../../platform/postgres.js';
import type { ParamDef, SearchParameterResource } from './params.js';
import { BaseSearchParams, type ParamsByType } from './registry.js';

const EMPTY = new Map<string, ParamDef>();

/** How long a project's own parameters are trusted before they are re-read (by default). */
export const RELOAD_AFTER_MS = 30_000;

/**
 * The search parameters in force for each project: the base ones (R4 and platform) plus the
 * SearchParameter resources a project created (hl7.org/fhir/R4/searchparameter.html), which
 * override a base parameter of the same code for that project only.
 * Projects' own definitions are cached in memory; this process reloads a project's after a
 * SearchParameter write, every process re-reads a project's after `forget` (a SearchParameter
 * write in any process: services.ts wires the change notices), and at its first search after
 * `maxAgeMs` (HEARTH_CACHE_MAX_AGE_MS: a missed notice, or a write that rolled back).
 */
export class SearchParamRegistry {
  private readonly overlays = new Map<string, ParamsByType>();
  private readonly merged = new Map<string, Map<string, ParamDef>>();
  /** When each project's parameters were last read (Date.now()). */
  private readonly loaded = new Map<string, number>();
  /** Bumped by forget: a read begun before it does not count as fresh. */
  private generation = 0;
  constructor(
    private readonly maxAgeMs = RELOAD_AFTER_MS,
    /** R4's and the platform's parameters (built once, on first use). */
    readonly base = new BaseSearchParams(),
  ) {}

  /** Loads a project's own parameters when this process has not read them for maxAgeMs. */
  async ensure(db: Queryable, projectId: string, now = Date.now()): Promise<void> {
    const at = this.loaded.get(projectId);
    if (at === undefined || now - at >= this.maxAgeMs) {
      await this.reload(db, projectId, now);
    }
  }

  /** The project's parameters changed (in some process): re-read them before their next use. */
  forget(projectId: string): void {
    this.generation++;
    this.loaded.delete(projectId);
  }

  /** Re-reads one project's SearchParameter resources. Returns the resource types they apply to. */
  async reload(db: Queryable, projectId: string, now = Date.now()): Promise<Set<string>> {
    const before = this.overlays.get(projectId);
    this.loaded.set(projectId, now);
    const started = this.generation;
    const result = await db.query<{ content: string }>(
      `SELECT content FROM "SearchParameter" WHERE project_id = $1 AND deleted = false`,
      [projectId],
    );
    if (started !== this.generation) {
      // Forgotten while reading: what was read may predate the change; the next use reads again.
      this.loaded.delete(projectId);
    }
    const own = result.rows
      .map((r) => JSON.parse(r.content) as SearchParameterResource)
      .filter((sp) => sp.status !== 'retired' && sp.code && !(sp.url && this.base.isBase(sp.url)));
    const affected = new Set<string>([...(before?.keys() ?? [])]);
    if (own.length === 0) {
      this.overlays.delete(projectId);
    } else {
      const overlay: ParamsByType = new Map();
      const defs = new Map(own.filter((sp) => sp.url).map((sp) => [sp.url!, sp]));
      this.base.addParams(overlay, own, true, defs);
      this.overlays.set(projectId, overlay);
      overlay.forEach((_v, type) => affected.add(type));
    }
    for (const key of [...this.merged.keys()]) {
      if (key.startsWith(`${projectId}|`)) this.merged.delete(key);
    }
    return affected;
  }

  /** True when the project defines parameters of its own. */
  hasOwn(projectId: string | undefined): boolean {
    return projectId !== undefined && this.overlays.has(projectId);
  }

  /** The parameters of a type in a project, keyed by code. */
  paramsFor(resourceType: string, projectId?: string): Map<string, ParamDef> {
    const base = this.base.byType().get(resourceType) ?? EMPTY;
    const overlay = projectId ? this.overlays.get(projectId)?.get(resourceType) : undefined;
    if (!overlay) {
      return base;
    }
    const key = `${projectId}|${resourceType}`;
    let m = this.merged.get(key);
    if (!m) {
      m = new Map([...base, ...overlay]);
      this.merged.set(key, m);
    }
    return m;
  }

  get(resourceType: string, code: string, projectId?: string): ParamDef | undefined {
    return this.paramsFor(resourceType, projectId).get(code);
  }
}
