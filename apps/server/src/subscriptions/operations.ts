// Subscription/{id}/$get-ws-binding-token and {type}/{id}/$resend.
import { randomUUID } from 'node:crypto';
import { allOk, badRequest, fail, type Resource } from '@hearth/core';
import type { JobQueue } from '../jobs/queue.js';
import { RESOURCE_RESEND } from '../operations/definitions/hearth.js';
import { GET_WS_BINDING_TOKEN } from '../operations/definitions/implementation-guides.js';
import type { OperationRegistry } from '../operations/registry.js';
import { jsonResult } from '../operations/result.js';
import { EVALUATE_QUEUE } from './evaluate.js';
import type { ChangeEvent } from './model.js';
import type { BindingTokens } from './websocket.js';

export interface SubscriptionOperationDeps {
  tokens: BindingTokens;
  jobs: JobQueue;
  baseUrl: string;
  /** Lifetime of a binding token, in seconds. */
  tokenTtlSeconds: number;
}

/** The websocket URL of this server: ws(s)://host/ws/subscriptions-r4. */
export function websocketUrl(baseUrl: string): string {
  const url = new URL('ws/subscriptions-r4', baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

function parameter(body: unknown, name: string): string | undefined {
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) {
    return undefined;
  }
  const params = body as {
    resourceType?: string;
    parameter?: { name?: string; valueString?: string; valueReference?: { reference?: string } }[];
  };
  if (params.resourceType === 'Parameters') {
    const p = params.parameter?.find((x) => x.name === name);
    return p?.valueString ?? p?.valueReference?.reference;
  }
  const v = (body as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

export function registerSubscriptionOperations(registry: OperationRegistry, deps: SubscriptionOperationDeps): void {
  registry.register({
    definition: GET_WS_BINDING_TOKEN,
    handler: async ({ context, target, query, body }) => {
      const { repo } = context;
      const id = target.id ?? query.get('id') ?? parameter(body, 'id');
      if (!id) {
        fail(badRequest('Give the subscription id in the path: Subscription/{id}/$get-ws-binding-token', 'id'));
      }
      const subscription = (await repo.readResource('Subscription', id)).resource as Resource & {
        channel?: { type?: string };
      };
      if (subscription.channel?.type !== 'websocket') {
        fail(badRequest(`Subscription/${id} is not a websocket subscription`, 'Subscription.channel.type'));
      }
      const { token, expiration } = await deps.tokens.issue(
        id,
        subscription.meta?.project as string,
        deps.tokenTtlSeconds,
      );
      return jsonResult({
        resourceType: 'Parameters',
        parameter: [
          { name: 'subscription', valueString: id },
          { name: 'token', valueString: token },
          { name: 'expiration', valueDateTime: expiration.toISOString() },
          { name: 'websocket-url', valueUrl: websocketUrl(deps.baseUrl) },
        ],
      });
    },
  });

  registry.register({
    definition: RESOURCE_RESEND,
    handler: async ({ context, target, body }) => {
      const { repo } = context;
      const resourceType = target.resourceType as string;
      const read = await repo.readResource(resourceType, target.id as string);
      const only = parameter(body, 'subscription')?.replace(/^Subscription\//, '');
      const change: ChangeEvent = {
        projectId: read.resource.meta?.project as string,
        resourceType,
        id: read.resource.id as string,
        versionId: read.versionId,
        interaction: 'update',
        resendId: randomUUID(),
        ...(only ? { onlySubscription: only } : {}),
      };
      await deps.jobs.send(EVALUATE_QUEUE, { changes: [change] });
      return jsonResult(allOk);
    },
  });
}
