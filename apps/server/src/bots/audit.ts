import { generateId, type Resource } from '@hearth/core';
import type { Logger } from '../platform/logger.js';
import { retryWhileUnreachable } from '../platform/postgres.js';
import type { Repository } from '../storage/repository.js';

/** Codes of the automation events Hearth records (AuditEvent.subtype). */
export const AUTOMATION_SYSTEM = 'https://hearth.dev/fhir/CodeSystem/automation-event';

export type AutomationEventKind = 'bot-execute' | 'subscription-delivery';

export interface AutomationAudit {
  kind: AutomationEventKind;
  /** What acted: "Bot/1" or "Subscription/2" (named in agent.name; a Bot is also agent.who). */
  agent: string;
  /** On whose behalf: the subscription's author (agent.who when the agent is not itself a Bot). */
  onBehalfOf?: string;
  /** What the event was about: the bot, the subscription, the resource delivered. */
  entities: string[];
  success: boolean;
  /** Console output of a bot, or the delivery's status line; truncated. */
  description: string;
  start: Date;
  end: Date;
  /** Correlates a run or delivery with request logs. */
  traceId?: string;
}

/** Longest outcomeDesc stored (console output beyond it is cut). */
const MAX_DESCRIPTION = 10_000;

/**
 * The AuditEvent of one bot run or one subscription delivery attempt (hl7.org/fhir/R4/auditevent.html):
 * an application activity (DICOM 110100) executed by the bot or subscription, outcome 0 (success)
 * or 4 (minor failure: the event failed, the server did not), with the output in outcomeDesc.
 */
export function buildAuditEvent(audit: AutomationAudit): Resource {
  const description =
    audit.description.length > MAX_DESCRIPTION
      ? `${audit.description.slice(0, MAX_DESCRIPTION)}\n... (${audit.description.length - MAX_DESCRIPTION} more characters)`
      : audit.description;
  const event: Resource = {
    resourceType: 'AuditEvent',
    type: { system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110100', display: 'Application Activity' },
    subtype: [{ system: AUTOMATION_SYSTEM, code: audit.kind }],
    action: 'E',
    period: { start: audit.start.toISOString(), end: audit.end.toISOString() },
    recorded: audit.end.toISOString(),
    outcome: audit.success ? '0' : '4',
    agent: [
      {
        ...(audit.agent.startsWith('Bot/')
          ? { who: { reference: audit.agent } }
          : audit.onBehalfOf
            ? { who: { reference: audit.onBehalfOf } }
            : {}),
        name: audit.agent,
        requestor: false,
      },
    ],
    source: {
      observer: { display: 'Hearth' },
      type: [
        {
          system: 'http://terminology.hl7.org/CodeSystem/security-source-type',
          code: '4',
          display: 'Application Server',
        },
      ],
    },
    entity: audit.entities.map((reference) => ({ what: { reference } })),
  };
  if (description) {
    event.outcomeDesc = description;
  }
  if (audit.traceId) {
    event.extension = [{ url: 'https://hearth.dev/fhir/StructureDefinition/trace-id', valueString: audit.traceId }];
  }
  return event;
}

/** Most AuditEvents written in one statement. */
const MAX_BATCH = 200;
/** How long an AuditEvent may wait for others to share its write. */
const FLUSH_DELAY_MS = 20;
/** How long a batch is written again while PostgreSQL cannot be reached. */
const RETRY_UNREACHABLE_MS = 60_000;

/**
 * Records automation AuditEvents in batches: events of one project that arrive within a few
 * milliseconds of each other are written together in one multi-row statement, so a busy bot or
 * subscription pays a fraction of a write per event. Ids are assigned up front (so callers can name
 * the event at once); a failure to record is logged, never thrown. flush() writes what is pending.
 */
export class AuditWriter {
  private readonly pending = new Map<string, Resource[]>();
  private timer?: NodeJS.Timeout;
  private readonly writes = new Set<Promise<void>>();
  /** Per project, settles once the batch now pending is written (or failed to be). */
  private readonly batchWritten = new Map<string, { promise: Promise<void>; resolve: () => void }>();

  constructor(
    private readonly systemRepo: (projectId?: string) => Repository,
    private readonly logger: Logger,
  ) {}

  /** Queues an AuditEvent for the project; returns its id. */
  record(projectId: string, audit: AutomationAudit): string {
    const id = generateId();
    const list = this.pending.get(projectId) ?? [];
    list.push({ ...buildAuditEvent(audit), id });
    this.pending.set(projectId, list);
    if (!this.batchWritten.has(projectId)) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.batchWritten.set(projectId, { promise, resolve });
    }
    if (list.length >= MAX_BATCH) {
      this.flushProject(projectId);
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_DELAY_MS);
    }
    return id;
  }

  private flushProject(projectId: string): void {
    const batch = this.pending.get(projectId);
    const written = this.batchWritten.get(projectId);
    this.pending.delete(projectId);
    this.batchWritten.delete(projectId);
    if (!batch?.length) {
      written?.resolve();
      return;
    }
    // Written again while PostgreSQL restarts (for a minute at most): the record of an attempt
    // that happened must not be lost to an outage. Ids are fixed, so a write that committed
    // unanswered fails its repeat as a duplicate instead of recording twice.
    const giveUpAt = Date.now() + RETRY_UNREACHABLE_MS;
    const write = retryWhileUnreachable(
      () => this.systemRepo(projectId).createMany(batch),
      () => Date.now() > giveUpAt,
    ).then(
      () => undefined,
      (err: unknown) => {
        this.logger.warn({ err, projectId, count: batch.length }, 'could not record AuditEvents');
      },
    );
    this.writes.add(write);
    void write.finally(() => {
      this.writes.delete(write);
      written?.resolve();
    });
  }

  /**
   * Settles once every AuditEvent recorded so far is written (or its write failed), in the batch it
   * joined: nothing is flushed early, so waiting costs no statement.
   */
  settled(): Promise<void> {
    return Promise.all([...[...this.batchWritten.values()].map((b) => b.promise), ...this.writes]).then(
      () => undefined,
    );
  }

  /** Writes every pending AuditEvent and waits for the writes in flight. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const projectId of [...this.pending.keys()]) {
      this.flushProject(projectId);
    }
    await Promise.all([...this.writes]);
  }
}
