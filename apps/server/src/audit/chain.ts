// Tamper evidence: each project's entries form a hash chain. An entry's hash covers the previous
// entry's hash, its project, its place in the chain and its content, so altering an entry changes
// its hash, and deleting or inserting one breaks the link or the numbering after it.
import { createHash } from 'node:crypto';
import type { Queryable } from '../platform/postgres.js';
import { columnsOf } from './audit-event.js';
import { storedEvent } from './stored-entry.js';
import type { EventColumns, TrailEvent } from './types.js';

/** The hash before a project's first entry. */
export const GENESIS = Buffer.alloc(32);

export function entryHash(previous: Buffer, projectId: string, seq: number, content: string): Buffer {
  return createHash('sha256').update(previous).update(`${projectId}\n${seq}\n`).update(content).digest();
}

export interface ChainBreak {
  /** The sequence number where the chain stops holding. */
  seq: number;
  /** The entry's id there, when a row exists. */
  id?: string;
  reason: string;
}

export interface ChainReport {
  projectId: string;
  /** Entries checked. */
  checked: number;
  /** The first and last sequence numbers of the chain as kept (after retention). */
  first: number;
  last: number;
  head: number;
  /** The first break found; none: the chain holds. */
  broken?: ChainBreak;
}

interface Row {
  seq: string;
  recorded: Date;
  id: string;
  action: string;
  outcome: string;
  type_code: string;
  agent: string[];
  entity: string[];
  patient: string[];
  content: string;
  prev_hash: Buffer;
  hash: Buffer;
}

const PAGE = 5000;

/**
 * Walks a project's chain in order, from the first entry retention kept to the head, and reports
 * the first break: a missing number (an entry deleted), a link that does not match the entry
 * before (deleted or re-linked), a hash that does not match the content (altered), columns that
 * do not say what the content says (a search column altered), or entries missing after the last
 * one (the newest deleted).
 */
export async function verifyChain(db: Queryable, projectId: string): Promise<ChainReport> {
  const head = await db.query<{ seq: string; hash: Buffer; purged_through: string }>(
    'SELECT seq, hash, purged_through FROM audit_chain WHERE project_id = $1',
    [projectId],
  );
  const headSeq = Number(head.rows[0]?.seq ?? 0);
  const purgedThrough = Number(head.rows[0]?.purged_through ?? 0);
  const report: ChainReport = { projectId, checked: 0, first: purgedThrough + 1, last: purgedThrough, head: headSeq };
  let expected = purgedThrough + 1;
  let previous: Buffer | undefined;
  for (;;) {
    const page = await db.query<Row>(
      `SELECT seq, recorded, id, action, outcome, type_code, agent, entity, patient, content, prev_hash, hash
         FROM audit_event WHERE project_id = $1 AND seq >= $2 ORDER BY seq LIMIT ${PAGE}`,
      [projectId, expected],
    );
    for (const row of page.rows) {
      const seq = Number(row.seq);
      const problem = checkRow(row, seq, expected, previous, projectId);
      if (problem) {
        report.broken = { seq: expected, id: seq === expected ? row.id : undefined, reason: problem };
        return report;
      }
      previous = row.hash;
      report.checked++;
      report.last = seq;
      expected = seq + 1;
    }
    if (page.rows.length < PAGE) break;
  }
  if (report.last < headSeq) {
    report.broken = { seq: report.last + 1, reason: `entries ${report.last + 1} to ${headSeq} are missing` };
  } else if (headSeq > 0 && previous && !previous.equals(head.rows[0].hash)) {
    report.broken = { seq: headSeq, reason: 'the last entry is not the one the chain head recorded' };
  }
  return report;
}

function checkRow(row: Row, seq: number, expected: number, previous: Buffer | undefined, projectId: string) {
  if (seq !== expected) {
    return `entry ${expected} is missing`;
  }
  // The first kept entry links to one retention purged: its link is taken as given.
  if (previous && !row.prev_hash.equals(previous)) {
    return `entry ${seq} does not link to entry ${seq - 1}`;
  }
  if (!entryHash(row.prev_hash, projectId, seq, row.content).equals(row.hash)) {
    return `entry ${seq} was altered: its content does not match its hash`;
  }
  let event: TrailEvent;
  try {
    event = storedEvent(projectId, row.content);
  } catch {
    return `entry ${seq} holds content that is not JSON`;
  }
  if (
    event.id !== row.id ||
    Date.parse(event.recorded) !== row.recorded.getTime() ||
    !sameColumns(columnsOf(event), row)
  ) {
    return `entry ${seq} was altered: its search columns do not match its content`;
  }
  return undefined;
}

function sameColumns(expected: EventColumns, row: Row): boolean {
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);
  return (
    expected.action === row.action.trim() &&
    expected.outcome === row.outcome &&
    expected.typeCode === row.type_code &&
    same(expected.agent, row.agent) &&
    same(expected.entity, row.entity) &&
    same(expected.patient, row.patient)
  );
}
