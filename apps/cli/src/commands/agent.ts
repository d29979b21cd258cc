/**
 * hearth agent status | list | push: the project's on-premises agents (hearth-agent) through
 * Agent/{id}/$status, Agent/$bulk-status and Agent/{id}/$push. A server without agents gets a
 * clear message and exit code 2.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  HL7_V2_CONTENT_TYPE,
  OperationOutcomeError,
  type Agent,
  type Bundle,
  type Endpoint,
  type Parameters,
} from '@hearth/core';
import { connect, type CliClient, type GlobalOptions } from '../client.js';
import { contentTypeOf } from '../input.js';
import {
  CliError,
  EXIT_FAILURE,
  EXIT_UNAVAILABLE,
  formatTable,
  info,
  isMissingRoute,
  printBody,
  printJson,
} from '../output.js';
import { searchQuery } from './rest.js';

/** What $status answers: connected or not, the version the agent reported, its last heartbeat. */
export interface AgentStatus {
  status: string;
  version?: string;
  lastHeartbeat?: string;
}

export interface ChannelSummary {
  name: string;
  endpoint: string;
  /** The Endpoint's address, when it could be read. */
  address?: string;
  target: string;
}

/** The largest waitTimeout the server accepts (Agent/$push). */
const MAX_PUSH_TIMEOUT_MS = 60_000;

/** The status, version and last heartbeat in a $status answer. */
export function statusOf(parameters: Parameters | undefined): AgentStatus {
  const params = parameters?.parameter ?? [];
  const find = (name: string) => params.find((p) => p.name === name);
  const version = find('version')?.valueString;
  const lastHeartbeat = find('lastUpdated')?.valueInstant;
  return {
    status: find('status')?.valueCode ?? 'unknown',
    ...(version ? { version } : {}),
    ...(lastHeartbeat ? { lastHeartbeat } : {}),
  };
}

/** Runs an agent operation; a server that has none is told apart (exit code 2). */
async function agentCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isMissingRoute(err)) {
      throw new CliError(
        'Agents (Agent/$status, $bulk-status, $push) are not available on this server',
        EXIT_UNAVAILABLE,
      );
    }
    throw err;
  }
}

/** The channels of an Agent with their Endpoints' addresses (the reference alone when unreadable). */
async function channelsOf(hearth: CliClient, agent: Agent): Promise<ChannelSummary[]> {
  return Promise.all(
    (agent.channel ?? []).map(async (channel) => {
      const endpoint = channel.endpoint?.reference ?? '';
      let address: string | undefined;
      if (/^Endpoint\/[A-Za-z0-9\-.]{1,64}$/.test(endpoint)) {
        const read = await hearth
          .readResource('Endpoint', endpoint.slice('Endpoint/'.length), { cache: 'no-cache' })
          .catch(() => undefined);
        address = (read as Endpoint | undefined)?.address;
      }
      return {
        name: channel.name,
        endpoint,
        ...(address ? { address } : {}),
        target: channel.targetReference?.reference ?? channel.targetUrl ?? '',
      };
    }),
  );
}

async function showStatus(hearth: CliClient, id: string, json: boolean): Promise<void> {
  const [agent, parameters] = await agentCall(() =>
    Promise.all([
      hearth.readResource('Agent', id, { cache: 'no-cache' }) as Promise<Agent>,
      hearth.get<Parameters>(hearth.fhirUrl('Agent', id, '$status'), { cache: 'no-cache' }),
    ]),
  );
  const status = statusOf(parameters);
  const channels = await channelsOf(hearth, agent);
  if (json) {
    printJson({ id, name: agent.name, agentStatus: agent.status, ...status, channels });
    return;
  }
  const lines = [
    ['agent', `Agent/${id} ${agent.name} (${agent.status})`],
    ['status', status.status],
    ['version', status.version ?? '-'],
    ['last heartbeat', status.lastHeartbeat ?? '-'],
  ];
  const width = Math.max(...lines.map(([key]) => key.length));
  console.log(lines.map(([key, value]) => `${key.padEnd(width)}  ${value}`).join('\n'));
  if (channels.length === 0) {
    console.log('\nNo channels');
    return;
  }
  console.log(
    `\n${formatTable(
      ['channel', 'address', 'target'],
      channels.map((c) => [c.name, c.address ?? c.endpoint, c.target]),
    )}`,
  );
}

/**
 * No search parameters: every agent. $bulk-status takes at least one (it searches as a conditional
 * interaction does), so the one every Agent matches is given: its status, required, of these three.
 */
const EVERY_AGENT = 'status=active,off,error';

async function listAgents(hearth: CliClient, params: string[], json: boolean): Promise<void> {
  const query = searchQuery(params.length > 0 ? params : [EVERY_AGENT]);
  const bundle = await agentCall(() =>
    hearth.get<Bundle>(hearth.fhirSearchUrl('Agent/$bulk-status', query), { cache: 'no-cache' }),
  );
  if (json) {
    printJson(bundle);
    return;
  }
  const rows = (bundle.entry ?? []).map((entry) => {
    const parameters = (entry.resource as Parameters | undefined)?.parameter ?? [];
    const agent = parameters.find((p) => p.name === 'agent')?.resource as Agent | undefined;
    const status = statusOf(parameters.find((p) => p.name === 'result')?.resource as Parameters | undefined);
    return {
      row: [agent?.id ?? '', agent?.name ?? '', status.status, status.version ?? '-', status.lastHeartbeat ?? '-'],
      connected: status.status === 'connected',
    };
  });
  if (rows.length === 0) {
    info('No agents match');
    return;
  }
  console.log(
    formatTable(
      ['id', 'name', 'status', 'version', 'last heartbeat'],
      rows.map((r) => r.row),
    ),
  );
  info(`${rows.length} agent${rows.length === 1 ? '' : 's'}, ${rows.filter((r) => r.connected).length} connected`);
}

interface PushOptions {
  destination: string;
  channel?: string;
  contentType?: string;
  body?: string;
  file?: string;
  wait: boolean;
  timeout?: string;
}

/** The $push parameters from the options: one of --body or --file, the content type, the wait. */
export function pushParameters(options: PushOptions): Record<string, unknown> {
  if ((options.body === undefined) === (options.file === undefined)) {
    throw new CliError('Give the message with either --body <text> or --file <path>');
  }
  let body: string;
  if (options.file !== undefined) {
    try {
      body = readFileSync(options.file, 'utf8');
    } catch (err) {
      throw new CliError(`Cannot read ${options.file}: ${(err as Error).message}`);
    }
  } else {
    body = options.body as string;
  }
  const contentType = options.contentType ?? contentTypeOf(options.file);
  if (!contentType) {
    throw new CliError(`--content-type is required (e.g. ${HL7_V2_CONTENT_TYPE})`);
  }
  if (contentType.toLowerCase().startsWith(HL7_V2_CONTENT_TYPE)) {
    // HL7 v2 segments end with a carriage return: a file or argument with line breaks is read as segments.
    body = body.replace(/\r?\n/g, '\r').replace(/\r+$/, '\r');
  }
  if (body === '') {
    throw new CliError('The message is empty');
  }
  let waitTimeout: number | undefined;
  if (options.timeout !== undefined) {
    waitTimeout = Number(options.timeout);
    if (!Number.isInteger(waitTimeout) || waitTimeout < 1 || waitTimeout > MAX_PUSH_TIMEOUT_MS) {
      throw new CliError(`--timeout must be a number of milliseconds from 1 to ${MAX_PUSH_TIMEOUT_MS}`);
    }
  }
  return {
    destination: options.destination,
    body,
    contentType,
    ...(options.channel ? { channel: options.channel } : {}),
    waitForResponse: options.wait,
    ...(waitTimeout !== undefined ? { waitTimeout } : {}),
  };
}

async function push(hearth: CliClient, id: string, options: PushOptions): Promise<void> {
  const parameters = pushParameters(options);
  let answer: unknown;
  try {
    answer = await agentCall(() => hearth.post(hearth.fhirUrl('Agent', id, '$push'), parameters, 'application/json'));
  } catch (err) {
    // The server answers 504 (issue code timeout) when the remote did not answer in time, 502
    // (transient) when it could not be reached or refused: told by the code, as the SDK's error
    // keeps the outcome but not every HTTP status.
    if (err instanceof OperationOutcomeError) {
      const code = err.outcome.issue?.[0]?.code;
      if (code === 'timeout') {
        throw new CliError(
          `No answer from ${options.destination} through Agent/${id}: ${err.message}`,
          EXIT_FAILURE,
          err.outcome,
        );
      }
      if (code === 'transient') {
        throw new CliError(err.message, EXIT_FAILURE, err.outcome);
      }
    }
    throw err;
  }
  if (!options.wait) {
    info(`Agent/${id} has the message for ${options.destination} (not waiting for an answer)`);
    return;
  }
  if (answer === undefined || answer === null || answer === '') {
    info(`${options.destination} accepted the message and sent no answer`);
    return;
  }
  // HL7 v2 answers have \r between segments: one line each on a terminal.
  printBody(typeof answer === 'string' ? answer.replace(/\r(?!\n)/g, '\n') : answer);
}

export function registerAgentCommands(program: Command): void {
  const agent = program
    .command('agent')
    .description('See the on-premises agents (hearth-agent) and send messages out through them');

  agent
    .command('status')
    .description("An agent's connection: connected or not, its version, last heartbeat and channels ($status)")
    .argument('<id>', 'the Agent id')
    .option('--json', 'print the status as JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      await showStatus(hearth, id, !!options.json);
    });

  agent
    .command('list')
    .description('Every agent matching a search, with its status, version and last heartbeat ($bulk-status)')
    .argument('[params...]', "Agent search parameters: name=lab status=active (or one 'a=1&b=2'); none: all")
    .option('--json', 'print the Bundle the server answered')
    .action(async (params: string[], options: { json?: boolean }, command: Command) => {
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      await listAgents(hearth, params, !!options.json);
    });

  agent
    .command('push')
    .description("Send a message out through an agent to a destination and print the remote's answer ($push)")
    .argument('<id>', 'the Agent id')
    .requiredOption(
      '--destination <address>',
      'where to: an address such as mllp://10.0.0.5:2575, or Device/{id} or Endpoint/{id}',
    )
    .option('--channel <name>', "the agent's channel to send through (default: the one of the address's scheme)")
    .option(
      '--content-type <type>',
      `the message's content type, e.g. ${HL7_V2_CONTENT_TYPE} (default: from the --file name)`,
    )
    .option('--body <text>', 'the message itself (HL7 v2: line breaks become segment separators)')
    .option('--file <path>', 'a file holding the message')
    .option('--no-wait', 'answer as soon as the agent has the message, without the remote’s answer')
    .option(
      '--timeout <ms>',
      `how long the server waits for the answer (default 10000, at most ${MAX_PUSH_TIMEOUT_MS})`,
    )
    .action(async (id: string, options: PushOptions, command: Command) => {
      const { hearth } = await connect(command.optsWithGlobals<GlobalOptions>());
      await push(hearth, id, options);
    });
}
