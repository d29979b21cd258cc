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

/**
 * Patients whose data a response holds: Patient resources in it (`"resourceType":"Patient","id":"x"`),
 * entries of patients (`"fullUrl":".../Patient/x"`) and references to patients
 * (`"reference":"[base/]Patient/x[/_history/n]"`). One indexOf walk over the text: responses of
 * searches and histories run to hundreds of kilobytes, and three regular expressions over them
 * cost more than the request itself did.
 */
export function patientsIn(text: string | undefined, own?: string): string[] {
  const found = new Set<string>();
  if (own) found.add(own);
  if (!text) return [...found];
  let at = 0;
  while ((at = text.indexOf('Patient', at)) !== -1 && found.size < MAX_PATIENTS) {
    const next = text.charCodeAt(at + 7);
    const isResource = next === 34 && text.startsWith('","id":"', at + 7);
    if (next !== 47 && !isResource) {
      at += 7;
      continue;
    }
    const start = at + (isResource ? 15 : 8);
    let end = start;
    while (end - start <= MAX_ID && isIdChar(text.charCodeAt(end))) end++;
    const length = end - start;
    if (length >= 1 && length <= MAX_ID) {
      const after = text.charCodeAt(end);
      const before = text.charCodeAt(at - 1);
      let matched = false;
      if (isResource) {
        matched = after === 34 && text.startsWith('"resourceType":"', at - 16);
      } else if (before === 34 || before === 47) {
        // The string this reference sits in, and the member it is the value of.
        const open = text.lastIndexOf('"', at - 1);
        if (text.startsWith('"reference":', open - 12)) {
          // A version-qualified reference counts once its string closes (cut-off text is no reference).
          matched = after === 34 || (text.startsWith('/_history/', end) && text.indexOf('"', end + 10) !== -1);
        } else {
          matched = before === 47 && after === 34 && text.startsWith('"fullUrl":', open - 10);
        }
      }
      if (matched) found.add(`Patient/${text.slice(start, end)}`);
    }
    at = Math.max(end, at + 7);
  }
  return [...found];
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
