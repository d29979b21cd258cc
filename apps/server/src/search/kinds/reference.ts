import { badRequest, fail, Operator, type Resource } from '@hearth/core';
import { isResourceType } from '@hearth/definitions';
import type { TypedValue } from '../extract/evaluate.js';
import type { IndexContext } from '../index/context.js';
import type { RowSet } from '../index/rows.js';
import { unescapeValue, type QueryContext } from '../query/context.js';
import { anyOf, type MatchInput, type RowMatch, type SearchParamKind } from './kind.js';
import { indexToken, matchToken } from './token.js';

/** A reference string resolved against the server: a local target (type, id) or a URL kept as written. */
interface ParsedReference {
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
function parseReference(reference: string, fhirBase?: string, typeHint?: string): ParsedReference {
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
function indexReference(values: TypedValue[], code: string, grp: number, rows: RowSet, ctx: IndexContext): void {
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
function inlineResource(value: unknown, rows: RowSet, ctx: IndexContext): ParsedReference | undefined {
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
    const inner = ctx.extractRows(value as Resource, ctx.paramsOf(r.resourceType), {
      ...ctx,
      resource: { ...(value as Record<string, unknown>), id: ctx.resource.id },
    });
    entry = { resourceType: r.resourceType, id: `@${contained.length}`, rows: inner, source: value };
    contained.push(entry);
  }
  return { targetType: r.resourceType, targetId: `${ctx.resource.id}#${entry.id}`, ref: null };
}

/**
 * Reference search (hl7.org/fhir/R4/search.html#reference): `Type/id`, a bare `id` (of the
 * `:Type` given, else of any allowed type), an absolute URL (local when on this server's base),
 * a canonical (`url|version` matches the url), `:identifier` (the reference's identifier, as a
 * token). `:missing` is handled for every kind by the caller.
 */
function matchReference(ctx: QueryContext, { x, items, filter, param, modifier, typeModifier }: MatchInput): RowMatch {
  if (modifier === Operator.IDENTIFIER) {
    const m = matchToken(ctx, { x, items, filter, param });
    return { ...m, code: `${param.code}:identifier` };
  }
  if (modifier) {
    fail(badRequest(`Modifier :${modifier} is not supported on reference parameter ${filter.code}`, filter.code));
  }
  const ids: string[] = [];
  const preds: string[] = [];
  for (const item of items) {
    const text = unescapeValue(item.text).trim();
    if (!text) {
      fail(badRequest(`Empty reference for search parameter ${filter.code}`, filter.code));
    }
    if (!text.includes('/') && !text.includes(':') && !text.startsWith('#')) {
      ids.push(text);
      continue;
    }
    const parsed = parseReference(text, ctx.fhirBase);
    if (parsed.targetId) {
      if (typeModifier && parsed.targetType !== typeModifier) {
        preds.push('false');
        continue;
      }
      preds.push(`${x}.target_id = ${ctx.bind(parsed.targetId)} AND ${x}.target_type = ${ctx.bind(parsed.targetType)}`);
    } else {
      preds.push(`${x}.ref = ${ctx.bind(parsed.ref)}`);
    }
  }
  if (ids.length > 0) {
    const idPred =
      ids.length === 1 ? `${x}.target_id = ${ctx.bind(ids[0])}` : `${x}.target_id = ANY(${ctx.bind(ids, 'text[]')})`;
    preds.unshift(typeModifier ? `${idPred} AND ${x}.target_type = ${ctx.bind(typeModifier)}` : idPred);
  }
  return { kind: 'reference', code: param.code, predicate: anyOf(preds) };
}

/** A reference's sort key: its URL as written, else Type/id. */
function referenceKey(x: string): string {
  return `coalesce(${x}.ref, ${x}.target_type || '/' || ${x}.target_id)`;
}

export const referenceKind: SearchParamKind = {
  type: 'reference',
  prefixed: false,
  table: 'reference',
  index: (values, { code, grp }, rows, ctx) => indexReference(values, code, grp, rows, ctx),
  match: matchReference,
  sort: { asc: referenceKey, desc: referenceKey, type: 'text' },
};
