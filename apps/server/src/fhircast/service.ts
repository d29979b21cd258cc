// The FHIRcast hub's requests (fhircast.org 3.0): subscribe and unsubscribe, publish, current
// context, discovery. HTTP-free: the routes (fhir/fhircast-routes.ts) hand over the caller and body.
import { badRequest, fail, forbiddenWith } from '@hearth/core';
import { endpointToken, endpointUrl, type EndpointClaims, type EndpointTokens } from './endpoints.js';
import { SUPPORTED_EVENTS, SYNC_ERROR, canonicalEventName, parseEvent } from './events.js';
import type { FhircastHub } from './hub.js';
import { mayUse, requireScopes, type FhircastCaller } from './scopes.js';
import type { CurrentContext, FhircastStore } from './store.js';
import { requireOwnTopic, topicFor } from './topic.js';

/** Leases: what a subscriber gets without asking, and the most it can ask for. */
export const DEFAULT_LEASE_SECONDS = 3600;
export const MAX_LEASE_SECONDS = 86_400;

export interface FhircastServiceDeps {
  baseUrl: string;
  tokens: EndpointTokens;
  store: FhircastStore;
  hub: FhircastHub;
}

function field(form: Record<string, unknown>, name: string): string | undefined {
  const v = form[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function required(form: Record<string, unknown>, name: string): string {
  const v = field(form, name);
  if (v === undefined) {
    fail(badRequest(`${name} is required`, name));
  }
  return v;
}

/** hub.events: a comma-separated list of supported event names, in the spec's spelling. */
function parseEvents(text: string): string[] {
  const events: string[] = [];
  for (const raw of text.split(',').map((e) => e.trim())) {
    if (raw === '') continue;
    const name = canonicalEventName(raw);
    if (!name) {
      fail(
        badRequest(
          `Unsupported event "${raw}" in hub.events: this hub supports ${SUPPORTED_EVENTS.join(', ')}`,
          'hub.events',
        ),
      );
    }
    if (!events.includes(name)) events.push(name);
  }
  if (events.length === 0) {
    fail(badRequest('hub.events needs at least one event name', 'hub.events'));
  }
  return events;
}

function parseLease(text: string | undefined): number {
  if (text === undefined) {
    return DEFAULT_LEASE_SECONDS;
  }
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) {
    fail(badRequest(`hub.lease_seconds must be a whole number of seconds, got "${text}"`, 'hub.lease_seconds'));
  }
  return Math.min(Number(text), MAX_LEASE_SECONDS);
}

export class FhircastService {
  constructor(private readonly deps: FhircastServiceDeps) {}

  /** The caller's own topic. */
  topicOf(caller: FhircastCaller): string {
    return topicFor(caller.projectId, caller.profile);
  }

  /** `.well-known/fhircast-configuration`. */
  configuration(): Record<string, unknown> {
    return {
      eventsSupported: SUPPORTED_EVENTS,
      websocketSupported: true,
      webhookSupported: false,
      fhircastVersion: 'STU3',
      getCurrentSupport: true,
      fhirVersion: '4.0.1',
      hubUrl: new URL('fhircast', this.deps.baseUrl).toString(),
    };
  }

  /**
   * POST /fhircast with hub.mode subscribe or unsubscribe (form fields). Subscribing answers the
   * websocket channel endpoint; subscribing again with `hub.channel.endpoint` changes that
   * subscription's events and lease.
   */
  async subscription(caller: FhircastCaller, form: Record<string, unknown>): Promise<Record<string, unknown>> {
    const mode = required(form, 'hub.mode');
    if (mode !== 'subscribe' && mode !== 'unsubscribe') {
      fail(badRequest(`hub.mode must be subscribe or unsubscribe, got "${mode}"`, 'hub.mode'));
    }
    const channelType = required(form, 'hub.channel.type');
    if (channelType.toLowerCase() !== 'websocket') {
      fail(
        badRequest(`hub.channel.type "${channelType}" is not supported: this hub offers websocket`, 'hub.channel.type'),
      );
    }
    const topic = required(form, 'hub.topic');
    requireOwnTopic(caller, topic);
    const given = field(form, 'hub.channel.endpoint');
    const existing = given ? await this.ownEndpoint(caller, topic, given) : undefined;
    if (mode === 'unsubscribe') {
      if (!existing) {
        fail(
          badRequest(
            'Unsubscribing needs hub.channel.endpoint (the endpoint the subscription got)',
            'hub.channel.endpoint',
          ),
        );
      }
      await this.deps.hub.unsubscribe(existing);
      return { 'hub.channel.endpoint': given };
    }
    const events = parseEvents(required(form, 'hub.events'));
    requireScopes(
      caller,
      events.filter((e) => e !== SYNC_ERROR),
      'read',
    );
    const expires = Date.now() + parseLease(field(form, 'hub.lease_seconds')) * 1000;
    if (existing && given) {
      await this.deps.hub.resubscribe({ ...existing, events, expires });
      return { 'hub.channel.endpoint': given };
    }
    const name = field(form, 'subscriber.name')?.slice(0, 200);
    const { token } = await this.deps.tokens.issue({
      projectId: caller.projectId,
      topic,
      events,
      expires,
      ...(name ? { name } : {}),
    });
    return { 'hub.channel.endpoint': endpointUrl(this.deps.baseUrl, token) };
  }

  /** The claims of an endpoint the caller was given for this topic; a 400 or 403 otherwise. */
  private async ownEndpoint(caller: FhircastCaller, topic: string, endpoint: string): Promise<EndpointClaims> {
    const claims = await this.deps.tokens.verify(endpointToken(endpoint));
    if (!claims) {
      fail(badRequest('hub.channel.endpoint is not an endpoint this hub handed out', 'hub.channel.endpoint'));
    }
    if (claims.projectId !== caller.projectId || claims.topic !== topic) {
      fail(forbiddenWith('hub.channel.endpoint belongs to another topic'));
    }
    return claims;
  }

  /** POST /fhircast/{topic} (or /fhircast with the topic in the event): checks, applies, distributes. */
  async publish(caller: FhircastCaller, body: unknown, topicInPath?: string): Promise<void> {
    const event = parseEvent(body, topicInPath);
    requireOwnTopic(caller, event.event['hub.topic']);
    requireScopes(caller, [event.event['hub.event']], 'write');
    const delivered = await this.deps.store.apply(caller.projectId, event);
    await this.deps.hub.publish(caller.projectId, delivered);
  }

  /** GET /fhircast/{topic}: the current context (needs read access to some event of the topic). */
  async current(caller: FhircastCaller, topic: string): Promise<CurrentContext> {
    requireOwnTopic(caller, topic);
    const readable = SUPPORTED_EVENTS.filter((e) => e !== SYNC_ERROR);
    if (!readable.some((e) => mayUse(caller, e, 'read'))) {
      fail(forbiddenWith('Reading the current context needs a fhircast/{event}.read scope (or fhircast/*.read)'));
    }
    return this.deps.store.current(caller.projectId, topic);
  }
}
