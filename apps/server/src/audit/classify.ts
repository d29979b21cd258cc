// A finished FHIR request as the accesses it made: the interaction its method and path name, the
// resource or search it was about, and the patients whose data it touched.
import type { AuditAccess, AuditMode } from './types.js';

/** What the HTTP layer knows of a finished request (no framework types). */
export interface FinishedRequest {
  method: string;
  /** The path after the FHIR base ("Patient/123/_history"), not decoded; no query. */
  path: string;
  /** The query string without '?'. */
  query: string;
  status: number;
  /** The parsed request body (Bundles). */
  body: unknown;
  /** The response body when it was text. */
  payload: string | undefined;
  started: Date;
  /** The interaction the route ran when it said (PATCH). */
  interaction?: string;
}

const MAX_PATIENTS = 1000;
const MAX_ID = 64;

/** [A-Za-z0-9\-.]: the characters of a FHIR id. */
function isIdChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 46;
}

/** The end of the run of id characters from `start` (exclusive), looking at most MAX_ID + 1 ahead. */
function idEnd(text: string, start: number): number {
  let end = start;
  while (end - start <= MAX_ID && isIdChar(text.charCodeAt(end))) end++;
  return end;
}

/**
 * The patient id a reference string (text[start, close), quotes excluded) names, as the rule reads
 * it (an optional prefix ending in '/', then Patient/{id}, then optionally /_history/ and
 * anything): the last "Patient/{id}" that starts the string or follows a '/', and ends it or is
 * followed by "/_history/".
 */
function referencedPatient(text: string, start: number, close: number): string | undefined {
  let at = text.lastIndexOf('Patient/', close - 9);
  while (at >= start) {
    if (at === start || text.charCodeAt(at - 1) === 47) {
      const end = idEnd(text, at + 8);
      const length = end - at - 8;
      if (
        length >= 1 &&
        length <= MAX_ID &&
        (end === close || (text.startsWith('/_history/', end) && end + 10 <= close))
      ) {
        return text.slice(at + 8, end);
      }
    }
    at = at === 0 ? -1 : text.lastIndexOf('Patient/', at - 1);
  }
  return undefined;
}

/**
 * Patients whose data a response holds: Patient resources in it (`"resourceType":"Patient","id":"x"`),
 * entries of patients (`"fullUrl":".../Patient/x"`) and references to patients
 * (`"reference":"[base/]Patient/x[/_history/n]"`). One indexOf walk over the text per kind, each
 * read as its regular expression would (a match consumes its string): responses of searches and
 * histories run to hundreds of kilobytes, and regular expressions over them cost more than the
 * request itself did.
 */
export function patientsIn(text: string | undefined, own?: string): string[] {
  const found = new Set<string>();
  if (own) found.add(own);
  if (text) {
    for (const [prefix, read] of RULES) {
      if (!eachMatch(text, prefix, read, (id) => found.add(`Patient/${id}`).size < MAX_PATIENTS)) break;
    }
  }
  return [...found];
}

/** Reads the string a rule's prefix opens (text[start, close)): the patient id it names, if any. */
type StringRule = (text: string, start: number, close: number) => string | undefined;

/** The string is the id itself: `"resourceType":"Patient","id":"{id}"`. */
const wholeId: StringRule = (text, start, close) => {
  const length = close - start;
  return length >= 1 && length <= MAX_ID && idEnd(text, start) === close ? text.slice(start, close) : undefined;
};

/** The string ends in /Patient/{id}: `"fullUrl":"{anything}/Patient/{id}"`. */
const fullUrlId: StringRule = (text, start, close) => {
  let idStart = close;
  while (idStart > start && isIdChar(text.charCodeAt(idStart - 1))) idStart--;
  const length = close - idStart;
  return length >= 1 && length <= MAX_ID && idStart - 9 >= start && text.startsWith('/Patient/', idStart - 9)
    ? text.slice(idStart, close)
    : undefined;
};

const RULES: [string, StringRule][] = [
  ['"resourceType":"Patient","id":"', wholeId],
  ['"fullUrl":"', fullUrlId],
  ['"reference":"', referencedPatient],
];

/**
 * Each string value after `prefix`, read as a global regular expression reads the text: a match
 * consumes its string (the search goes on after its closing quote), a miss moves on by one
 * character. False once `add` says to stop.
 */
function eachMatch(text: string, prefix: string, read: StringRule, add: (id: string) => boolean): boolean {
  for (let at = text.indexOf(prefix); at !== -1;) {
    const start = at + prefix.length;
    const close = text.indexOf('"', start);
    if (close === -1) return true;
    const id = read(text, start, close);
    if (id !== undefined) {
      if (!add(id)) return false;
      at = text.indexOf(prefix, close + 1);
    } else {
      at = text.indexOf(prefix, at + 1);
    }
  }
  return true;
}

/** Entries of a searchset (or any Bundle) text: the matches on the page. */
function countIn(text: string | undefined): number | undefined {
  if (!text) return undefined;
  let count = 0;
  for (let at = text.indexOf('"mode":"match"'); at !== -1; at = text.indexOf('"mode":"match"', at + 14)) count++;
  return count;
}

interface Target {
  interaction: string;
  operation?: string;
  resourceType?: string;
  id?: string;
  versionId?: number;
  search: boolean;
  compartment?: string;
}

/** What a method and a path relative to the FHIR base name; undefined: nothing to record (metadata). */
export function targetOf(method: string, path: string, interaction?: string): Target | undefined {
  const segments = path.split('/').filter(Boolean).map(safeDecode);
  const [a, b, c, d] = segments;
  const op = (name: string | undefined) => (name?.startsWith('$') ? name.slice(1) : undefined);
  const write = (type?: string, id?: string): Target => {
    const kind =
      interaction ??
      (method === 'POST' ? 'create' : method === 'PUT' ? 'update' : method === 'PATCH' ? 'patch' : 'delete');
    return { interaction: kind, resourceType: type, id, search: false };
  };
  if (segments.length === 0) {
    return method === 'POST' ? { interaction: 'batch', search: false } : { interaction: 'search-system', search: true };
  }
  if (a === 'metadata' || a === '.well-known') return undefined;
  if (op(a)) return { interaction: 'operation', operation: op(a), search: false };
  if (a === '_history') return { interaction: 'history-system', search: true };
  if (a === '_search') return { interaction: 'search-system', search: true };
  if (segments.length === 1) {
    return method === 'GET' || method === 'HEAD'
      ? { interaction: 'search-type', resourceType: a, search: true }
      : write(a);
  }
  if (op(b)) return { interaction: 'operation', operation: op(b), resourceType: a, search: false };
  if (b === '_history') return { interaction: 'history-type', resourceType: a, search: true };
  if (b === '_search') return { interaction: 'search-type', resourceType: a, search: true };
  if (segments.length === 2) {
    return method === 'GET' || method === 'HEAD'
      ? { interaction: 'read', resourceType: a, id: b, search: false }
      : write(a, b);
  }
  if (op(c)) return { interaction: 'operation', operation: op(c), resourceType: a, id: b, search: false };
  if (c === '_history') {
    return d === undefined
      ? { interaction: 'history-instance', resourceType: a, id: b, search: true }
      : { interaction: 'vread', resourceType: a, id: b, versionId: Number(d) || undefined, search: false };
  }
  // A compartment search: Patient/123/Observation.
  return {
    interaction: 'search-compartment',
    resourceType: c === '*' ? undefined : c,
    compartment: `${a}/${b}`,
    search: true,
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const WRITES = new Set(['create', 'update', 'patch', 'delete']);

function actionOf(target: Target, method: string): AuditAccess['action'] {
  switch (target.interaction) {
    case 'create':
      return 'C';
    case 'update':
    case 'patch':
      return 'U';
    case 'delete':
      return 'D';
    case 'operation':
    case 'batch':
      return method === 'GET' ? 'R' : 'E';
    default:
      return 'R';
  }
}

/**
 * The accesses to record for a request in `mode`. `durableWrites`: entries its writes already
 * put in the outbox (a successful write is recorded there, not again here).
 */
export function accessesOf(request: FinishedRequest, mode: AuditMode, durableWrites: number): AuditAccess[] {
  if (mode === 'off') return [];
  const target = targetOf(request.method, request.path, request.interaction);
  if (!target) return [];
  const ok = request.status < 400;
  if (WRITES.has(target.interaction) && ok && durableWrites > 0) return [];
  if (target.interaction === 'batch' && mode === 'full' && ok) {
    return bundleAccesses(request);
  }
  const full = mode === 'full';
  const own =
    target.resourceType === 'Patient' && target.id
      ? `Patient/${target.id}`
      : target.compartment?.startsWith('Patient/')
        ? target.compartment
        : undefined;
  const readsData = ok && request.method !== 'DELETE' && !WRITES.has(target.interaction);
  return [
    {
      interaction: target.interaction,
      operation: target.operation,
      action: actionOf(target, request.method),
      resourceType: target.resourceType ?? target.compartment?.split('/')[0],
      id: target.id ?? (target.compartment ? target.compartment.split('/')[1] : undefined),
      versionId: target.versionId,
      patients: full ? (readsData ? patientsIn(request.payload, own) : own ? [own] : []) : [],
      query: target.search || target.interaction === 'operation' ? request.query : undefined,
      count: target.search && ok ? countIn(request.payload) : undefined,
      status: request.status,
      recorded: request.started,
    },
  ];
}

interface ResponseBundle {
  entry?: { resource?: unknown; response?: { status?: string } }[];
}
interface RequestBundle {
  entry?: { request?: { method?: string; url?: string } }[];
}

/** A batch or transaction in full mode: one access per entry that read, or whose write failed. */
function bundleAccesses(request: FinishedRequest): AuditAccess[] {
  const entries = (request.body as RequestBundle | undefined)?.entry;
  if (!Array.isArray(entries) || !request.payload) return [];
  const reads = entries.some((e) => e?.request?.method === 'GET' || e?.request?.method === 'HEAD');
  const isBatch = (request.body as { type?: string }).type === 'batch';
  if (!reads && !isBatch) return [];
  let response: ResponseBundle;
  try {
    response = JSON.parse(request.payload) as ResponseBundle;
  } catch {
    return [];
  }
  const accesses: AuditAccess[] = [];
  entries.forEach((entry, i) => {
    const method = String(entry?.request?.method ?? '');
    const [path, query = ''] = String(entry?.request?.url ?? '').split('?');
    const answer = response.entry?.[i];
    const status = Number.parseInt(String(answer?.response?.status ?? '0'), 10) || 0;
    const target = targetOf(method, path);
    if (!target || (WRITES.has(target.interaction) && status < 400)) return;
    const own = target.resourceType === 'Patient' && target.id ? `Patient/${target.id}` : target.compartment;
    const text = status < 400 && answer?.resource ? JSON.stringify(answer.resource) : undefined;
    accesses.push({
      interaction: target.interaction,
      operation: target.operation,
      action: actionOf(target, method),
      resourceType: target.resourceType,
      id: target.id,
      versionId: target.versionId,
      patients: WRITES.has(target.interaction) ? [] : patientsIn(text, own?.startsWith('Patient/') ? own : undefined),
      query: target.search ? query : undefined,
      count: target.search && status < 400 ? countIn(text) : undefined,
      status,
      recorded: request.started,
    });
  });
  return accesses;
}
