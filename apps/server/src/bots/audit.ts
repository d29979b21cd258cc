import type { Resource } from '@hearth/core';
import type { Logger } from '../platform/logger.js';
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

/** Writes the AuditEvent in the project's repository; a failure to record is logged, never thrown. */
export async function recordAudit(
  repo: Repository,
  audit: AutomationAudit,
  logger: Logger,
): Promise<string | undefined> {
  try {
    const { resource } = await repo.createResource(buildAuditEvent(audit));
    return resource.id;
  } catch (err) {
    logger.warn({ err, agent: audit.agent, kind: audit.kind }, 'could not record an AuditEvent');
    return undefined;
  }
}
