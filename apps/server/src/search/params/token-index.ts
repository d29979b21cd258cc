import type { TypedValue } from '../extract/evaluate.js';
import type { IndexRow, RowSet } from '../index/rows.js';
import { normalizeString } from '../values/strings.js';

const MAX_TOKEN = 1024;

interface Coding {
  system?: string;
  code?: string;
  display?: string;
}

function row(code: string, grp: number, system: unknown, value: unknown, text?: unknown): IndexRow {
  const v = value === undefined || value === null ? null : String(value).slice(0, MAX_TOKEN);
  const s = typeof system === 'string' ? system.slice(0, MAX_TOKEN) : null;
  const t = typeof text === 'string' && text ? normalizeString(text) : null;
  // A row without a code (a CodeableConcept's text) has nothing to sort by. The last two values
  // are the resource's date sort keys, set once all its rows are known (rows.ts stampTokenSortDates).
  return { code, grp, values: [s, v, t, null, null], sortLow: v, sortHigh: v };
}

/**
 * Token values (hl7.org/fhir/R4/search.html#token): codes, Codings and CodeableConcepts
 * (system, code, display/text for :text), Identifiers (system, value; the type as an :of-type
 * row), ContactPoints (system, value), booleans and other primitives.
 */
export function indexToken(values: TypedValue[], code: string, grp: number, rows: RowSet, withText = true): void {
  for (const { value, type } of values) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      rows.token.push(row(code, grp, null, value));
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const v = value as Record<string, unknown>;
    if (type === 'CodeableConcept' || Array.isArray(v.coding) || (type === undefined && typeof v.text === 'string')) {
      const codings = (v.coding as Coding[] | undefined) ?? [];
      for (const c of codings) {
        if (c && (c.code !== undefined || c.system !== undefined)) {
          rows.token.push(row(code, grp, c.system, c.code, withText ? c.display : undefined));
        }
      }
      // The text gets a row of its own only when no coding's display already says it.
      if (withText && typeof v.text === 'string' && v.text) {
        const text = normalizeString(v.text);
        if (!codings.some((c) => typeof c?.display === 'string' && normalizeString(c.display) === text)) {
          rows.token.push(row(code, grp, null, null, v.text));
        }
      }
      continue;
    }
    if (type === 'ContactPoint') {
      rows.token.push(row(code, grp, v.system, v.value));
      continue;
    }
    if (type === 'Identifier' || (type === undefined && 'value' in v && !('code' in v))) {
      rows.token.push(row(code, grp, v.system, v.value, (v.type as { text?: string } | undefined)?.text));
      const typeCodings = ((v.type as { coding?: Coding[] } | undefined)?.coding ?? []).filter((c) => c?.code);
      for (const c of typeCodings) {
        rows.token.push(row(`${code}:of-type`, grp, c.system, `${c.code}|${String(v.value ?? '')}`));
      }
      continue;
    }
    if (type === 'Coding' || 'code' in v || 'system' in v) {
      rows.token.push(row(code, grp, v.system, v.code ?? v.value, v.display));
      continue;
    }
    if ('value' in v) {
      rows.token.push(row(code, grp, v.system, v.value));
    }
  }
}
