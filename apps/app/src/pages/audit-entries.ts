// Reading the access audit trail's AuditEvents for the app's audit pages.
import type { Resource } from '@hearth/core';

export interface TrailEvent extends Resource {
  recorded: string;
  action?: string;
  outcome?: string;
  outcomeDesc?: string;
  subtype?: { code?: string; display?: string }[];
  agent?: {
    who?: { reference?: string; display?: string };
    altId?: string;
    requestor?: boolean;
    network?: { address?: string };
  }[];
  entity?: {
    what?: { reference?: string; display?: string };
    query?: string;
    detail?: { type?: string; valueString?: string }[];
  }[];
}

const ACTIONS: Record<string, string> = { C: 'create', R: 'read', U: 'update', D: 'delete', E: 'execute' };
const OUTCOMES: Record<string, string> = { '0': 'success', '4': 'refused', '8': 'server error', '12': 'major failure' };

export function actionLabel(event: TrailEvent): string {
  const subtype = event.subtype?.[0];
  return subtype?.display ?? subtype?.code ?? ACTIONS[event.action ?? ''] ?? event.action ?? '';
}

export function outcomeLabel(event: TrailEvent): string {
  return `${OUTCOMES[event.outcome ?? ''] ?? event.outcome ?? ''}${event.outcomeDesc ? ` (${event.outcomeDesc})` : ''}`;
}

/** Who did it: the requesting agent's name or reference. */
export function whoLabel(event: TrailEvent): string {
  const agent = event.agent?.find((a) => a.requestor) ?? event.agent?.[0];
  return agent?.who?.display ?? agent?.who?.reference ?? 'unknown';
}

/** What it was about: the first entity's reference, or the searched type with its result count. */
export function whatLabel(event: TrailEvent): string {
  const first = event.entity?.[0];
  if (!first) return '';
  const count = first.detail?.find((d) => d.type === 'count')?.valueString;
  const name = first.what?.reference ?? first.what?.display ?? '';
  return count !== undefined ? `${name} (${count} found)` : name;
}

export function patientsOf(event: TrailEvent): string[] {
  return (event.entity ?? []).map((e) => e.what?.reference).filter((r): r is string => !!r && r.startsWith('Patient/'));
}

/** Entries per hour (spans under three days) or per day, oldest first: the activity chart's points. */
export function activityBuckets(events: TrailEvent[]): { time: string; count: number; failures: number }[] {
  if (events.length === 0) return [];
  const times = events.map((e) => Date.parse(e.recorded)).filter((t) => !Number.isNaN(t));
  const span = Math.max(...times) - Math.min(...times);
  const hourly = span < 3 * 86_400_000;
  const key = (t: number) => new Date(t).toISOString().slice(0, hourly ? 13 : 10);
  const buckets = new Map<string, { count: number; failures: number }>();
  for (const event of events) {
    const t = Date.parse(event.recorded);
    if (Number.isNaN(t)) continue;
    const bucket = buckets.get(key(t)) ?? { count: 0, failures: 0 };
    bucket.count++;
    if (event.outcome && event.outcome !== '0') bucket.failures++;
    buckets.set(key(t), bucket);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([time, b]) => ({ time: hourly ? `${time.replace('T', ' ')}:00` : time, ...b }));
}
