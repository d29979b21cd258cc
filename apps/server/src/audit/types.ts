import type { Resource } from '@hearth/core';

/**
 * How much a project's trail records (Project.setting `auditMode`):
 * - `full`: one entry per resource read or written, per search with the patients in its results,
 *   per Bundle entry;
 * - `summary`: one entry per request, naming its target, without the patients touched (writes
 *   still get one durable entry each: see docs/compliance.md);
 * - `off`: nothing.
 */
export type AuditMode = 'off' | 'summary' | 'full';

export const AUDIT_MODES: readonly AuditMode[] = ['off', 'summary', 'full'];

/** Who made a request, as the trail names them. */
export interface AuditAgent {
  /** The membership's profile: Practitioner/.., Patient/.., ClientApplication/.., Bot/.. */
  profile?: string;
  profileDisplay?: string;
  /** ProjectMembership/.. */
  membership?: string;
  /** User/.., ClientApplication/.. or Bot/.. that signed in. */
  login?: string;
}

/** The request an entry belongs to. */
export interface AuditRequestInfo {
  projectId: string;
  agent: AuditAgent;
  address?: string;
  userAgent?: string;
  requestId: string;
}

/** One access, before it is turned into an AuditEvent. */
export interface AuditAccess {
  /** The FHIR interaction (hl7.org/fhir/R4/valueset-type-restful-interaction.html) or `operation`. */
  interaction: string;
  /** For operations: the name, without '$'. */
  operation?: string;
  /** C, R, U, D or E (hl7.org/fhir/R4/valueset-audit-event-action.html). */
  action: 'C' | 'R' | 'U' | 'D' | 'E';
  resourceType?: string;
  id?: string;
  versionId?: number;
  /** "Patient/123" of each patient compartment touched. */
  patients: string[];
  /** A search: its query (values included: the trail is the place that must say what was looked for). */
  query?: string;
  /** A search: the entries it returned. */
  count?: number;
  status: number;
  recorded: Date;
}

/** What the trail's columns hold for an entry: searched by these, served as its event. */
export interface EventColumns {
  action: string;
  outcome: string;
  typeCode: string;
  agent: string[];
  entity: string[];
  patient: string[];
}

/**
 * An entry ready for the trail: its project, id, time and columns, and its content as stored
 * (stored-entry.ts: the facts it is built from, or a mirrored AuditEvent), which its hash covers.
 */
export interface TrailEntry {
  projectId: string;
  id: string;
  recorded: string;
  columns: EventColumns;
  content: string;
}

export interface TrailEvent extends Resource {
  resourceType: 'AuditEvent';
  id: string;
  recorded: string;
  action?: string;
  outcome?: string;
  type?: { system?: string; code?: string; display?: string };
  agent?: { who?: { reference?: string } }[];
  entity?: { what?: { reference?: string } }[];
}
