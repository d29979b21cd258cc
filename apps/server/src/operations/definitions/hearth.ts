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
