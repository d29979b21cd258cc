/**
 * Component test support: jsdom gaps Mantine needs, a HearthClient over a scripted fetch, the
 * real UI metadata, and render() inside the providers.
 */
import { MantineProvider } from '@mantine/core';
import { HearthClient, MemoryStorage } from '@hearth/core';
import { cleanup, configure, render, type RenderResult } from '@testing-library/react';
import { afterEach } from 'vitest';
import type { ReactElement } from 'react';
import { HearthProvider } from '../provider/HearthProvider.js';
import type { UiMetadata } from '../provider/metadata.js';
// @ts-expect-error: a plain JavaScript build script without declarations.
import { buildUiMetadata } from '../../scripts/metadata.mjs';

// jsdom lacks these; Mantine reads them.
if (typeof window !== 'undefined') {
  // Reduced motion: with the theme's respectReducedMotion, Mantine transitions take no time, so
  // no transition timer outlives a test (one firing after jsdom's teardown fails the run).
  window.matchMedia ??= ((query: string) => ({
    matches: query.includes('prefers-reduced-motion: reduce'),
    media: query,
    onchange: null,
    addListener: () => undefined,
    removeListener: () => undefined,
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    dispatchEvent: () => false,
  })) as unknown as typeof window.matchMedia;
  globalThis.ResizeObserver ??= class {
    observe(): void {}
    unobserve(): void {}
    disconnect(): void {}
  } as unknown as typeof ResizeObserver;
  window.HTMLElement.prototype.scrollIntoView ??= function scrollIntoView() {};
  // jsdom's Blob (and File) lack arrayBuffer().
  Blob.prototype.arrayBuffer ??= function arrayBuffer(this: Blob): Promise<ArrayBuffer> {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result as ArrayBuffer);
      reader.onerror = () => reject(reader.error);
      reader.readAsArrayBuffer(this);
    });
  };
}

afterEach(cleanup);

// findBy*/waitFor give up after 1 s by default; with two test workers and PostgreSQL-backed suites
// beside them, a first render (Mantine, the metadata) can take longer than that in CI.
configure({ asyncUtilTimeout: 5000 });

let metadata: UiMetadata | undefined;
export function testMetadata(): UiMetadata {
  metadata ??= buildUiMetadata() as UiMetadata;
  return metadata;
}

export interface Recorded {
  method: string;
  url: URL;
  body: unknown;
  /** The request's headers (e.g. If-Match of a conditional update). */
  headers: Headers;
}

export type Route = (req: Recorded) => unknown | Promise<unknown>;

/** A response: a value is sent as JSON with 200; a Reply with its status; a Response as it is (e.g. a Binary's bytes). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/**
 * A HearthClient whose fetch answers from `routes`: keys are 'METHOD /path' (path below the
 * server root, without query), matched exactly or as a prefix ending in '*'.
 */
export function mockClient(routes: Record<string, Route>): { client: HearthClient; requests: Recorded[] } {
  const requests: Recorded[] = [];
  const fetch = async (input: string, init?: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const method = init?.method ?? 'GET';
    let body: unknown = init?.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // Not JSON: kept as text.
      }
    }
    const req = { method, url, body, headers: new Headers(init?.headers) };
    requests.push(req);
    const key = `${method} ${url.pathname}`;
    const route =
      routes[key] ?? Object.entries(routes).find(([k]) => k.endsWith('*') && key.startsWith(k.slice(0, -1)))?.[1];
    if (!route) {
      return json(404, {
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: 'not-found', details: { text: `No mock for ${key}` } }],
      });
    }
    const result = await route(req);
    if (result instanceof Response) return result;
    return result instanceof Reply ? json(result.status, result.body) : json(200, result);
  };
  const client = new HearthClient({ baseUrl: 'http://test.local/', fetch, storage: new MemoryStorage(), cacheTime: 0 });
  return { client, requests };
}

function json(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/fhir+json' },
  });
}

export function bundle(resources: object[], total?: number): object {
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    total: total ?? resources.length,
    entry: resources.map((resource) => ({ resource })),
  };
}

export function renderWithHearth(
  ui: ReactElement,
  client: HearthClient,
  navigate: (to: string) => void = () => undefined,
): RenderResult {
  return render(
    <MantineProvider env="test" theme={{ respectReducedMotion: true }}>
      <HearthProvider client={client} metadata={testMetadata()} navigate={navigate}>
        {ui}
      </HearthProvider>
    </MantineProvider>,
  );
}
