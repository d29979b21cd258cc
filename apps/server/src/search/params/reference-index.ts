import type { Resource } from '@hearth/core';
import { isResourceType } from '@hearth/definitions';
import type { TypedValue } from '../extract/evaluate.js';
import type { ExtractContext, RowSet } from '../index/rows.js';
import { extractRows } from '../index/extract.js';
import { indexToken } from './token-index.js';

/** A reference string resolved against the server: a local target (type, id) or a URL kept as written. */
export interface ParsedReference {
  targetType: string | null;
  targetId: string | null;
  /** The URL for external, canonical, contained ('#x') and urn: references; null for local ones. */
  ref: string | null;
}

const LOCAL_RE = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]+)?$/;

/**
 * Parses a reference (hl7.org/fhir/R4/references.html): 'Patient/1', 'Patient/1/_history/2',
 * an absolute URL on this server's base (local), another absolute URL or canonical (kept as ref,
 * with its type when the path shows one), '#contained', 'urn:uuid:...'.
 */
export function parseReference(reference: string, fhirBase?: string, typeHint?: string): ParsedReference {
  let r = reference.trim();
  if (fhirBase && r.startsWith(fhirBase)) {
    r = r.slice(fhirBase.length);
  }
  const local = LOCAL_RE.exec(r);
  if (local && isResourceType(local[1])) {
    return { targetType: local[1], targetId: local[2], ref: null };
  }
  const canonical = r.split('|')[0];
  const typed = /\/([A-Z][A-Za-z]+)\/[^/]+$/.exec(canonical);
  const type = typed && isResourceType(typed[1]) ? typed[1] : (typeHint ?? null);
  return { targetType: type, targetId: null, ref: canonical.slice(0, 2048) };
}

/**
 * Reference values (hl7.org/fhir/R4/search.html#reference): Reference.reference, canonical and
 * uri values; Reference.identifier also becomes a token row under `code:identifier`.
 */
export function indexReference(
  values: TypedValue[],
  code: string,
  grp: number,
  rows: RowSet,
  ctx: ExtractContext,
): void {
  for (const { value } of values) {
    let parsed: ParsedReference | undefined;
    const inline = inlineResource(value, rows, ctx);
    if (inline) {
      parsed = inline;
    } else if (typeof value === 'string') {
      parsed = parseReference(value, ctx.fhirBase);
    } else if (value && typeof value === 'object') {
      const v = value as { reference?: unknown; type?: unknown; identifier?: unknown };
      const typeHint = typeof v.type === 'string' && isResourceType(v.type) ? v.type : undefined;
      if (typeof v.reference === 'string' && v.reference) {
        parsed = parseReference(v.reference, ctx.fhirBase, typeHint);
        if (v.reference.startsWith('#')) {
          // A contained target is indexed as the resource 'containerId#containedId' (index/extract.ts).
          const cid = v.reference.slice(1);
          const contained = (ctx.resource.contained as { id?: string; resourceType?: string }[] | undefined) ?? [];
          parsed.targetType = contained.find((c) => c.id === cid)?.resourceType ?? null;
          parsed.targetId =
            parsed.targetType && typeof ctx.resource.id === 'string' ? `${ctx.resource.id}#${cid}` : null;
        }
      } else if (typeHint) {
        parsed = { targetType: typeHint, targetId: null, ref: null };
      }
      if (v.identifier && typeof v.identifier === 'object') {
        indexToken([{ value: v.identifier, type: 'Identifier' }], `${code}:identifier`, grp, rows);
      }
    }
    if (!parsed) continue;
    const key = parsed.ref ?? `${parsed.targetType}/${parsed.targetId}`;
    rows.reference.push({
      code,
      grp,
      values: [parsed.targetType, parsed.targetId, parsed.ref],
      sortLow: key,
      sortHigh: key,
    });
  }
}

/**
 * A resource held inline where a reference parameter points (Bundle.composition and
 * Bundle.message: `Bundle.entry[0].resource`): indexed like a contained resource, as
 * 'containerId#@n', so that chains (`Bundle?composition.subject=Patient/1`) look inside it.
 * Undefined when the value is not a resource.
 */
function inlineResource(value: unknown, rows: RowSet, ctx: ExtractContext): ParsedReference | undefined {
  const r = value as { resourceType?: unknown } | null;
  if (!r || typeof r !== 'object' || typeof r.resourceType !== 'string' || !isResourceType(r.resourceType)) {
    return undefined;
  }
  if (typeof ctx.resource.id !== 'string' || !ctx.paramsOf)
    return { targetType: r.resourceType, targetId: null, ref: null };
  const contained = (rows.contained ??= []);
  // Two parameters may point at the same resource (composition and message): indexed once.
  let entry = contained.find((c) => c.source === value);
  if (!entry) {
    const inner = extractRows(value as Resource, ctx.paramsOf(r.resourceType), {
      ...ctx,
      resource: { ...(value as Record<string, unknown>), id: ctx.resource.id },
    });
    entry = { resourceType: r.resourceType, id: `@${contained.length}`, rows: inner, source: value };
    contained.push(entry);
  }
  return { targetType: r.resourceType, targetId: `${ctx.resource.id}#${entry.id}`, ref: null };
}
