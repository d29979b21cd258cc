// The parameters of Agent/{id}/$push: a Parameters resource or a plain JSON object.
import { badRequest, fail, type Resource } from '@hearth/core';
import type { OperationInput } from '../operations/types.js';
import type { Repository } from '../storage/repository.js';

export interface PushInput {
  destination: string;
  body: string;
  contentType: string;
  channel?: string;
  waitForResponse: boolean;
  waitTimeout: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 60_000;

type Param = { name?: string; [key: string]: unknown };

function fields(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Buffer.isBuffer(body) || Array.isArray(body)) {
    fail(badRequest('$push takes a JSON body: Parameters, or { destination, body, contentType, ... }'));
  }
  const record = body as Record<string, unknown>;
  if (record.resourceType !== 'Parameters') {
    return record;
  }
  const out: Record<string, unknown> = {};
  for (const p of (record.parameter ?? []) as Param[]) {
    const key = Object.keys(p).find((k) => k.startsWith('value'));
    if (p.name) {
      out[p.name] = key ? p[key] : p.resource;
    }
  }
  return out;
}

/** `Device/{id}` → Device.url, `Endpoint/{id}` → Endpoint.address (read with the caller's access). */
async function resolveDestination(value: unknown, repo: Repository): Promise<string> {
  const text = typeof value === 'object' && value !== null ? (value as { reference?: unknown }).reference : value;
  if (typeof text !== 'string' || text.trim() === '') {
    fail(badRequest('destination is required: Device/{id}, Endpoint/{id} or an address', 'destination'));
  }
  const match = /^(Device|Endpoint)\/([A-Za-z0-9\-.]{1,64})$/.exec(text);
  if (!match) {
    return text;
  }
  const resource = (await repo.readResource<Resource>(match[1], match[2])).resource as Resource & {
    url?: string;
    address?: string;
  };
  const address = match[1] === 'Device' ? resource.url : resource.address;
  if (!address) {
    fail(badRequest(`${text} has no ${match[1] === 'Device' ? 'url' : 'address'} to send to`, 'destination'));
  }
  return address;
}

export async function readPushInput(input: OperationInput, repo: Repository): Promise<PushInput> {
  const f = fields(input.body);
  if (typeof f.body !== 'string' || f.body === '') {
    fail(badRequest('body is required (the message as text)', 'body'));
  }
  if (typeof f.contentType !== 'string' || f.contentType === '') {
    fail(badRequest('contentType is required', 'contentType'));
  }
  if (f.channel !== undefined && typeof f.channel !== 'string') {
    fail(badRequest('channel must be a string', 'channel'));
  }
  const wait = f.waitForResponse ?? true;
  if (typeof wait !== 'boolean') {
    fail(badRequest('waitForResponse must be true or false', 'waitForResponse'));
  }
  const timeout = f.waitTimeout ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_MS) {
    fail(badRequest(`waitTimeout must be an integer of milliseconds from 1 to ${MAX_TIMEOUT_MS}`, 'waitTimeout'));
  }
  return {
    destination: await resolveDestination(f.destination, repo),
    body: f.body,
    contentType: f.contentType,
    ...(typeof f.channel === 'string' ? { channel: f.channel } : {}),
    waitForResponse: wait,
    waitTimeout: timeout,
  };
}
