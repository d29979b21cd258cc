import { badRequest, fail, type Resource } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { SearchService } from '../search/service.js';
import { historyBundleText } from '../resources/history.js';
import { patchResource } from '../resources/patch/apply.js';
import { outboundRequest, type OutboundPolicy } from '../platform/outbound-http.js';
import type { HostCall } from './sandbox.js';

export interface BridgeDeps {
  /** The repository the bot acts with: its own membership, its access policy applied. */
  repo: Repository;
  search: SearchService;
  fhirBase: string;
  outbound: OutboundPolicy;
  outboundTimeoutMs: number;
  /** Runs another bot as this bot's client would ($execute), when nesting is allowed. */
  executeBot?: (target: string, input: unknown, contentType: string | undefined) => Promise<unknown>;
}

/** Most bytes a bot's fetch may receive (the body is handed to the bot as text). */
const MAX_FETCH_BYTES = 8 << 20;

function str(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') {
    fail(badRequest(`${name} must be a non-empty string`, name));
  }
  return value;
}

function resourceArg(value: unknown): Resource {
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    typeof (value as Resource).resourceType !== 'string'
  ) {
    fail(badRequest('Expected a FHIR resource with a resourceType', 'resource'));
  }
  return value as Resource;
}

/**
 * The host side of the bot's `client` and `fetch`: a narrow table of repository operations, each
 * checked here (the bot is untrusted, its arguments come in as JSON) and run with the bot's own
 * repository, so the bot can do exactly what its membership may do and nothing else.
 */
export function createHostCall(deps: BridgeDeps): HostCall {
  const { repo, search, fhirBase } = deps;
  const searchBundle = async (resourceType: string, query: string): Promise<unknown> => {
    repo.assertType(resourceType);
    const text = await search.search(repo, {
      resourceType,
      params: new URLSearchParams(query),
      fhirBase,
      strict: false,
    });
    return JSON.parse(text) as unknown;
  };
  const table: Record<string, (args: unknown[]) => Promise<unknown>> = {
    read: async ([type, id]) => (await repo.readResource(str(type, 'resourceType'), str(id, 'id'))).resource,
    vread: async ([type, id, vid]) =>
      (await repo.readVersion(str(type, 'resourceType'), str(id, 'id'), str(vid, 'versionId'))).resource,
    history: async ([type, id]) =>
      JSON.parse(
        await historyBundleText(repo, fhirBase, { resourceType: str(type, 'resourceType'), id: str(id, 'id') }, {}),
      ),
    search: async ([type, query]) => searchBundle(str(type, 'resourceType'), typeof query === 'string' ? query : ''),
    create: async ([resource]) => (await repo.createResource(resourceArg(resource))).resource,
    createIfNoneExist: async ([resource, query]) =>
      (await repo.createResourceIfNoneExist(resourceArg(resource), str(query, 'query'))).resource,
    update: async ([resource]) => (await repo.updateResource(resourceArg(resource))).resource,
    upsert: async ([resource, query]) =>
      (await repo.conditionalUpdate(resourceArg(resource), str(query, 'query'))).resource,
    patch: async ([type, id, operations]) =>
      (await patchResource(repo, str(type, 'resourceType'), str(id, 'id'), operations)).resource,
    delete: async ([type, id]) => {
      await repo.deleteResource(str(type, 'resourceType'), str(id, 'id'));
      return undefined;
    },
    executeBot: async ([target, input, contentType]) => {
      if (!deps.executeBot) {
        fail(badRequest('Bots may not run other bots this deep'));
      }
      const ref = typeof target === 'string' ? target : (target as { reference?: string } | null)?.reference;
      return deps.executeBot(str(ref, 'bot'), input, typeof contentType === 'string' ? contentType : undefined);
    },
    $fetch: async ([request]) => {
      const r = (request ?? {}) as { url?: unknown; method?: unknown; headers?: unknown; body?: unknown };
      const headers: Record<string, string> = {};
      if (r.headers && typeof r.headers === 'object') {
        for (const [k, v] of Object.entries(r.headers as Record<string, unknown>)) {
          headers[k] = String(v);
        }
      }
      const response = await outboundRequest(deps.outbound, {
        url: str(r.url, 'url'),
        method: typeof r.method === 'string' ? r.method : 'GET',
        headers,
        body: typeof r.body === 'string' ? r.body : undefined,
        timeoutMs: deps.outboundTimeoutMs,
        maxResponseBytes: MAX_FETCH_BYTES,
      });
      return {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
        url: response.url,
        body: response.body.toString('utf8'),
      };
    },
  };
  return async (method, args) => {
    const fn = Object.hasOwn(table, method) ? table[method] : undefined;
    if (!fn) {
      fail(badRequest(`Unknown client method ${method}`));
    }
    return fn(args);
  };
}
