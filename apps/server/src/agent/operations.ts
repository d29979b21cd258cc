// Agent/{id}/$status, Agent/$bulk-status, Agent/{id}/$messages, Agent/{id}/$push, Agent/{id}/$reload-config.
import { allOk, badRequest, fail, type Parameters, type ParametersParameter, type Resource } from '@hearth/core';
import {
  AGENT_BULK_STATUS,
  AGENT_MESSAGES,
  AGENT_PUSH,
  AGENT_RELOAD_CONFIG,
  AGENT_STATUS,
} from '../operations/definitions/hearth.js';
import type { OperationRegistry } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import type { Repository } from '../storage/repository.js';
import { AgentTimeoutError, type AgentHub } from './hub.js';
import type { AgentConnectionStatus, AgentStore, LoggedMessage } from './store.js';
import { readPushInput } from './push-input.js';

const RELOAD_TIMEOUT_MS = 10_000;
const BULK_LIMIT = 1000;

/** Parameters that shape a search's answer without selecting anything. */
const RESULT_PARAMETERS = new Set(['_count', '_sort', '_total', '_summary', '_elements', '_format', '_pretty']);

function statusParameters(status: AgentConnectionStatus | undefined): Parameters {
  return {
    resourceType: 'Parameters',
    parameter: [
      { name: 'status', valueCode: status?.status ?? 'disconnected' },
      ...(status?.version ? [{ name: 'version', valueString: status.version }] : []),
      ...(status?.lastUpdated ? [{ name: 'lastUpdated', valueInstant: status.lastUpdated }] : []),
    ],
  } as Parameters;
}

/** One logged message as the parts of a `message` parameter of $messages. */
function messageParameter(message: LoggedMessage & { id: string; at: string }): ParametersParameter {
  return {
    name: 'message',
    part: [
      { name: 'id', valueString: message.id },
      { name: 'channel', valueString: message.channel },
      { name: 'direction', valueCode: message.direction },
      { name: 'time', valueInstant: message.at },
      { name: 'remote', valueString: message.remote },
      { name: 'contentType', valueString: message.contentType },
      { name: 'body', valueString: message.body },
      ...(message.response ? [{ name: 'response', valueString: message.response }] : []),
      { name: 'statusCode', valueInteger: message.statusCode },
    ],
  };
}

/** The channel $messages is asked about: `channel=` in the query, or a Parameters body's. */
function channelFilter(input: OperationInput): string | undefined {
  const fromQuery = input.query.getAll('channel');
  const body = input.body as { resourceType?: unknown; parameter?: { name?: string; valueString?: unknown }[] };
  const fromBody =
    body && typeof body === 'object' && body.resourceType === 'Parameters'
      ? (body.parameter ?? []).filter((p) => p.name === 'channel').map((p) => p.valueString)
      : [];
  const values = [...fromQuery, ...fromBody];
  if (values.length > 1) {
    fail(badRequest('channel is given more than once: ask about one channel, or leave it out for all', 'channel'));
  }
  if (values.length === 1 && typeof values[0] !== 'string') {
    fail(badRequest('channel must be a string (valueString)', 'channel'));
  }
  return values[0] === '' ? undefined : (values[0] as string | undefined);
}

/** Reads the Agent first: access to an agent's status and its socket is access to the Agent. */
async function readAgent(repo: Repository, id: string): Promise<Resource> {
  return (await repo.readResource<Resource>('Agent', id)).resource;
}

function gatewayTimeout(text: string): OperationResult {
  return {
    status: 504,
    json: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'timeout', diagnostics: text }] },
  };
}

export function registerAgentOperations(registry: OperationRegistry, hub: AgentHub, store: AgentStore): void {
  registry.register({
    definition: AGENT_STATUS,
    handler: async (input) => {
      const id = input.target.id as string;
      await readAgent(input.context.repo, id);
      return jsonResult(statusParameters((await store.statuses([id])).get(id)));
    },
  });

  registry.register({
    definition: AGENT_BULK_STATUS,
    handler: async (input) => {
      const { repo } = input.context;
      if ([...input.query.keys()].every((name) => RESULT_PARAMETERS.has(name))) {
        fail(
          badRequest(
            'Agent/$bulk-status selects agents by Agent search parameters (e.g. name, _id; status=active,off,error for every agent)',
            'Agent/$bulk-status',
          ),
        );
      }
      const ids = await repo.findMatches('Agent', input.query.toString(), BULK_LIMIT + 1);
      if (ids.length > BULK_LIMIT) {
        fail(badRequest(`More than ${BULK_LIMIT} agents match: narrow the search`));
      }
      const statuses = await store.statuses(ids);
      const entry = [];
      for (const id of ids) {
        const agent = await readAgent(repo, id);
        entry.push({
          resource: {
            resourceType: 'Parameters',
            parameter: [
              { name: 'agent', resource: agent },
              { name: 'result', resource: statusParameters(statuses.get(id)) },
            ],
          },
        });
      }
      return jsonResult({ resourceType: 'Bundle', type: 'collection', total: entry.length, entry });
    },
  });

  registry.register({
    definition: AGENT_MESSAGES,
    handler: async (input) => {
      const id = input.target.id as string;
      const channel = channelFilter(input);
      await readAgent(input.context.repo, id);
      const messages = await hub.recent(id, channel);
      const answer: Parameters = { resourceType: 'Parameters', parameter: messages.map(messageParameter) };
      return jsonResult(answer);
    },
  });

  registry.register({
    definition: AGENT_PUSH,
    handler: async (input: OperationInput) => {
      const { repo } = input.context;
      const id = input.target.id as string;
      await readAgent(repo, id);
      const push = await readPushInput(input, repo);
      const message = {
        type: 'agent:transmit:request' as const,
        ...(push.channel ? { channel: push.channel } : {}),
        remote: push.destination,
        contentType: push.contentType,
        body: push.body,
      };
      if (!push.waitForResponse) {
        await hub.sendTo(id, message);
        return { status: 202, json: allOk };
      }
      try {
        const answer = await hub.request(id, message, push.waitTimeout);
        if (answer.type === 'agent:error') {
          fail(badRequest(`Agent/${id}: ${answer.body}`));
        }
        if (answer.type !== 'agent:transmit:response') {
          fail(badRequest(`Agent/${id} answered ${answer.type}`));
        }
        const status = answer.statusCode ?? 200;
        if (status >= 400) {
          return gatewayFailure(status, `Agent/${id} could not deliver to ${push.destination}: ${answer.body}`);
        }
        return { body: answer.body, contentType: answer.contentType };
      } catch (err) {
        if (err instanceof AgentTimeoutError) {
          return gatewayTimeout(err.message);
        }
        throw err;
      }
    },
  });

  registry.register({
    definition: AGENT_RELOAD_CONFIG,
    handler: async (input) => {
      const id = input.target.id as string;
      await readAgent(input.context.repo, id);
      try {
        const answer = await hub.request(id, { type: 'agent:reloadconfig:request' }, RELOAD_TIMEOUT_MS);
        if (answer.type === 'agent:error') {
          fail(badRequest(`Agent/${id} could not reload: ${answer.body}`));
        }
      } catch (err) {
        if (err instanceof AgentTimeoutError) {
          return gatewayTimeout(err.message);
        }
        throw err;
      }
      await hub.reloaded(id);
      return jsonResult(allOk);
    },
  });
}

/** The remote refused or could not be reached: 502 (the agent is the gateway), the agent's words kept. */
function gatewayFailure(status: number, text: string): OperationResult {
  return {
    status: status === 504 ? 504 : 502,
    json: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'transient', diagnostics: text }] },
  };
}
