// Hearth's own operations, defined under its canonical base (https://hearth.dev/fhir).
import { HEARTH_FHIR_BASE } from '@hearth/definitions';
import type { OperationDefinition } from '@hearth/core';
import { operationDefinition, param } from './build.js';

const url = (id: string) => `${HEARTH_FHIR_BASE}/OperationDefinition/${id}`;

/** Bot/{id}/$execute and Bot/$execute?identifier=system|value: runs a bot with the request as its input. */
export const BOT_EXECUTE: OperationDefinition = operationDefinition({
  id: 'Bot-execute',
  url: url('Bot-execute'),
  name: 'BotExecute',
  title: 'Execute a bot',
  code: 'execute',
  description:
    'Runs the bot with the request as its input: the query parameters (GET) or the body in any media type (POST; text as a string, other binary content as base64). The answer is what the bot returns: a resource, JSON, or text in the media type asked for (Accept) or the one it was sent in. With Prefer: respond-async the run is an AsyncJob whose output holds the result.',
  levels: { type: true, instance: true },
  resource: ['Bot'],
  affectsState: true,
  parameter: [
    param('identifier', 'in', '0..1', 'string', 'Type level: the bot to run, by its identifier (system|value).'),
    param(
      'return',
      'out',
      '0..1',
      'Resource',
      "The bot's return value: a resource, other JSON, or text (then in its own media type).",
    ),
  ],
});

/** Bot/{id}/$deploy: compiles the bot's source and stores it as its executable code. */
export const BOT_DEPLOY: OperationDefinition = operationDefinition({
  id: 'Bot-deploy',
  url: url('Bot-deploy'),
  name: 'BotDeploy',
  title: 'Deploy a bot',
  code: 'deploy',
  description:
    'Compiles the bot (TypeScript or JavaScript) and stores the result as its executableCode. The body is JSON { code?, filename? }; without code, the Bot.sourceCode attachment is compiled.',
  levels: { instance: true },
  resource: ['Bot'],
  affectsState: true,
  parameter: [
    param('code', 'in', '0..1', 'string', 'The source to deploy (else Bot.sourceCode).'),
    param('filename', 'in', '0..1', 'string', 'Its file name; .ts compiles as TypeScript.'),
    param('return', 'out', '1..1', 'OperationOutcome', 'All OK once deployed.'),
  ],
});

/** CodeSystem/$import: concepts into a code system of the caller's project. */
export const CODE_SYSTEM_IMPORT: OperationDefinition = operationDefinition({
  id: 'CodeSystem-import',
  url: url('CodeSystem-import'),
  name: 'CodeSystemImport',
  title: 'Import concepts into a code system',
  code: 'import',
  description:
    "Merges concepts, their properties and parent links into a CodeSystem of the caller's own project, in one transaction. The body is Parameters, or a stream of NDJSON (one concept a line) or CSV / TSV (options in the query string: system, codeColumn, displayColumn, definitionColumn, parentColumn, where, propertyColumns, delimiter). Streamed bodies may be imported asynchronously (Prefer: respond-async). See terminology/README.md.",
  levels: { type: true, instance: true },
  resource: ['CodeSystem'],
  affectsState: true,
  parameter: [
    param('system', 'in', '0..1', 'uri', 'The code system (at type level; or ?system=).'),
    param('concept', 'in', '0..*', 'Coding', 'A concept: its code and display.'),
    param('property', 'in', '0..*', undefined, 'A property of a concept (property parent links the hierarchy).', [
      param('code', 'in', '1..1', 'code', 'The concept.'),
      param('property', 'in', '1..1', 'code', 'The property code.'),
      param('value', 'in', '1..1', 'string', 'Its value (value[x] of any primitive type or Coding).'),
    ]),
    param('system', 'out', '1..1', 'uri', 'The code system imported into.'),
    param('concepts', 'out', '1..1', 'integer', 'Concepts written.'),
    param('parentLinks', 'out', '1..1', 'integer', 'Parent links written.'),
    param('hierarchyPairs', 'out', '1..1', 'integer', 'Ancestor-descendant pairs of the closure.'),
    param('skipped', 'out', '1..1', 'integer', 'Lines or rows that were not concepts.'),
    param('durationMs', 'out', '1..1', 'integer', 'How long the import took.'),
  ],
});

/** Project/$init: a new project with its owner as admin. */
export const PROJECT_INIT: OperationDefinition = operationDefinition({
  id: 'Project-init',
  url: url('Project-init'),
  name: 'ProjectInit',
  title: 'Create a project',
  code: 'init',
  description:
    'Creates a project with its owner as admin: the caller, or (super admins only) the user of ownerEmail, created when new. With registration off only super admins create projects.',
  levels: { type: true, instance: true },
  resource: ['Project'],
  affectsState: true,
  parameter: [
    param('name', 'in', '1..1', 'string', 'The project name.'),
    param('description', 'in', '0..1', 'string', 'What the project is for.'),
    param('ownerEmail', 'in', '0..1', 'string', 'Super admins: the owner (a new user when unknown).'),
    param('strictMode', 'in', '0..1', 'boolean', 'Super admins: the project validates strictly.'),
    param('return', 'out', '1..1', 'Project', 'The new project (201, Location its URL).'),
  ],
});

/** {type}/{id}/$resend: the subscriptions are evaluated again for the resource's current version. */
export const RESOURCE_RESEND: OperationDefinition = operationDefinition({
  id: 'Resource-resend',
  url: url('Resource-resend'),
  name: 'ResourceResend',
  title: 'Send notifications for a resource again',
  code: 'resend',
  description:
    'Evaluates the active subscriptions again for the current version of the resource, as if it had just been updated, and sends the notifications that match (only those of one subscription when given).',
  levels: { instance: true },
  resource: ['Resource'],
  affectsState: true,
  parameter: [
    param('subscription', 'in', '0..1', 'string', 'Only this subscription (Subscription/{id} or its id).'),
    param('return', 'out', '1..1', 'OperationOutcome', 'All OK once queued.'),
  ],
});

/** Agent/{id}/$status: whether the agent's websocket is connected, its version, its last heartbeat. */
export const AGENT_STATUS: OperationDefinition = operationDefinition({
  id: 'Agent-status',
  url: url('Agent-status'),
  name: 'AgentStatus',
  title: 'Agent status',
  code: 'status',
  description:
    'Whether the on-premises agent holds its websocket to the server (/ws/agent) on any server process, the version it reported and when it last sent a heartbeat. An agent whose heartbeat is over a minute old counts as disconnected.',
  levels: { instance: true },
  resource: ['Agent'],
  parameter: [
    param('status', 'out', '1..1', 'code', 'connected | disconnected'),
    param('version', 'out', '0..1', 'string', 'The agent software version it reported.'),
    param('lastUpdated', 'out', '0..1', 'instant', 'Its last heartbeat (or connection).'),
  ],
});

/** Agent/$bulk-status: the status of every agent matching the search parameters given. */
export const AGENT_BULK_STATUS: OperationDefinition = operationDefinition({
  id: 'Agent-bulk-status',
  url: url('Agent-bulk-status'),
  name: 'AgentBulkStatus',
  title: 'Status of many agents',
  code: 'bulk-status',
  description:
    'Searches Agent with the query parameters given (as GET Agent?… would; at most 1000) and answers a Bundle with one Parameters per agent: agent (the resource) and result (its $status).',
  levels: { type: true },
  resource: ['Agent'],
  parameter: [param('return', 'out', '1..1', 'Bundle', 'One Parameters (agent, result) per agent.')],
});

/** Agent/{id}/$push: sends a message out through the agent to a destination and returns the answer. */
export const AGENT_PUSH: OperationDefinition = operationDefinition({
  id: 'Agent-push',
  url: url('Agent-push'),
  name: 'AgentPush',
  title: 'Push a message through an agent',
  code: 'push',
  description:
    "Sends body to destination (a Device or Endpoint reference, whose url/address is used, or an address such as mllp://10.0.0.5:2575) through the connected agent's channel for that protocol, and answers the remote's response (the agent persists the message first, so it survives an agent restart). waitForResponse=false answers 202 at once. Not connected: 400; no answer within waitTimeout milliseconds (default 10000): 504.",
  levels: { instance: true },
  resource: ['Agent'],
  affectsState: true,
  parameter: [
    param('destination', 'in', '1..1', 'string', 'Device/{id}, Endpoint/{id}, or an address with its scheme.'),
    param('body', 'in', '1..1', 'string', 'The message.'),
    param('contentType', 'in', '1..1', 'string', 'e.g. x-application/hl7-v2+er7.'),
    param('channel', 'in', '0..1', 'string', "The channel's name (else the one whose scheme the address has)."),
    param('waitForResponse', 'in', '0..1', 'boolean', 'Default true.'),
    param('waitTimeout', 'in', '0..1', 'integer', 'Milliseconds, default 10000, at most 60000.'),
    param('return', 'out', '0..1', 'string', "The remote's answer, in its content type."),
  ],
});

/** Agent/{id}/$reload-config: the agent reads its Agent, channels and endpoints again. */
export const AGENT_RELOAD_CONFIG: OperationDefinition = operationDefinition({
  id: 'Agent-reload-config',
  url: url('Agent-reload-config'),
  name: 'AgentReloadConfig',
  title: 'Reload an agent’s configuration',
  code: 'reload-config',
  description:
    'Asks the connected agent to read its Agent resource, channels and endpoints again and restart the channels that changed; answers once it has. Not connected: 400; no answer within 10 s: 504.',
  levels: { instance: true },
  resource: ['Agent'],
  affectsState: true,
  parameter: [param('return', 'out', '1..1', 'OperationOutcome', 'All OK once reloaded.')],
});

/** Agent/{id}/$messages: the agent's recent messages, per channel, newest first. */
export const AGENT_MESSAGES: OperationDefinition = operationDefinition({
  id: 'Agent-messages',
  url: url('Agent-messages'),
  name: 'AgentMessages',
  title: 'Recent messages of an agent',
  code: 'messages',
  description:
    "The last 20 messages of each of the agent's channels, newest first: those that came in (from a device, through the channel's bot) with the bot's answer, and those sent out ($push) with the remote's answer. Bodies and answers are cut to 4000 characters. channel= keeps one channel's. The log is written every half second, so a message shows here within a second of its answer.",
  levels: { instance: true },
  resource: ['Agent'],
  parameter: [
    param('channel', 'in', '0..1', 'string', "Only this channel's messages."),
    param('message', 'out', '0..*', undefined, 'One message, newest first.', [
      param('id', 'out', '1..1', 'string', 'The log entry: it stays the same while the message is kept.'),
      param('channel', 'out', '1..1', 'string', "The channel's name (empty when none was named or found)."),
      param('direction', 'out', '1..1', 'code', 'in (received by the agent) | out (sent by it, $push)'),
      param('time', 'out', '1..1', 'instant', 'When it was answered (or given up on).'),
      param('remote', 'out', '1..1', 'string', 'The other end: the sender, or the destination.'),
      param('contentType', 'out', '1..1', 'string', "The message's content type."),
      param('body', 'out', '1..1', 'string', 'The message.'),
      param('response', 'out', '0..1', 'string', "The answer: the bot's (in), the remote's (out), or the error."),
      param('statusCode', 'out', '1..1', 'integer', '200 answered; 4xx/5xx failed; 0 no answer (not waited for).'),
    ]),
  ],
});

/** ImagingStudy/$import-dicom: one DICOM instance stored as a Binary and indexed into its ImagingStudy. */
export const IMAGING_STUDY_IMPORT_DICOM: OperationDefinition = operationDefinition({
  id: 'ImagingStudy-import-dicom',
  url: url('ImagingStudy-import-dicom'),
  name: 'ImagingStudyImportDicom',
  title: 'Import a DICOM instance',
  code: 'import-dicom',
  description:
    "Stores one DICOM Part 10 file (the body, application/dicom) as a Binary and indexes it into the ImagingStudy of its Study Instance UID, in one transaction. The Binary's securityContext is the study; the ImagingStudy (identifier urn:dicom:uid|urn:oid:...) is created or updated with the series (uid, modality, number) and the instance (SOP Instance UID, SOP class, number, and an extension naming its Binary), numberOfSeries, numberOfInstances, modality, started, and the subject: the one Patient whose identifier has the file's PatientID, else a reference by that identifier. An instance the study already holds is not stored again (200 instead of 201). Instances of one study arriving at once are indexed one after the other.",
  levels: { type: true },
  resource: ['ImagingStudy'],
  affectsState: true,
  parameter: [
    param(
      'return',
      'out',
      '1..1',
      'ImagingStudy',
      'The study with the instance (201 when added, 200 when already there).',
    ),
  ],
});

/** Project/{id}/$verify-audit: walks the project's audit chain and reports the first break. */
export const PROJECT_VERIFY_AUDIT: OperationDefinition = operationDefinition({
  id: 'Project-verify-audit',
  url: url('Project-verify-audit'),
  name: 'ProjectVerifyAudit',
  title: "Verify a project's audit trail",
  code: 'verify-audit',
  description:
    "Project admins: checks every entry of the project's audit trail chain in order (its hash, its link to the entry before, its numbering, its search columns) from the first entry retention kept to the chain head, and reports the first break: an entry altered, deleted or inserted. See docs/compliance.md.",
  levels: { instance: true },
  resource: ['Project'],
  affectsState: false,
  parameter: [
    param('intact', 'out', '1..1', 'boolean', 'True when the whole chain holds.'),
    param('checked', 'out', '1..1', 'integer', 'Entries checked.'),
    param('first', 'out', '1..1', 'integer', 'The sequence number of the first entry kept.'),
    param('head', 'out', '1..1', 'integer', 'The sequence number of the last entry written.'),
    param('brokenAt', 'out', '0..1', 'integer', 'The sequence number of the first break.'),
    param('brokenEntry', 'out', '0..1', 'string', 'The id of the entry at the break, when it exists.'),
    param('reason', 'out', '0..1', 'string', 'What is wrong there.'),
  ],
});
