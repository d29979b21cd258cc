/**
 * A scriptable fetch for the client's unit tests: each request is recorded and answered by the
 * first handler whose method and path match.
 */
import type { FetchLike } from './types.js';

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** The body as text (streams are read to the end). */
  body: string;
  /** The body as bytes. */
  bytes: Uint8Array;
}

export type Handler = (req: RecordedRequest) => Response | Promise<Response>;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/fhir+json', ...headers },
  });
}

export function outcome(id: string, status: number, text: string): Response {
  return json(
    { resourceType: 'OperationOutcome', id, issue: [{ severity: 'error', code: 'processing', details: { text } }] },
    status,
  );
}

async function readAll(body: unknown): Promise<Uint8Array> {
  if (body === undefined || body === null) {
    return new Uint8Array();
  }
  if (typeof body === 'string') {
    return new TextEncoder().encode(body);
  }
  if (body instanceof URLSearchParams) {
    return new TextEncoder().encode(body.toString());
  }
  if (body instanceof ReadableStream) {
    const chunks: Uint8Array[] = [];
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      chunks.push(value as Uint8Array);
    }
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
    let offset = 0;
    for (const c of chunks) {
      out.set(c, offset);
      offset += c.byteLength;
    }
    return out;
  }
  if (body instanceof Blob) {
    return new Uint8Array(await body.arrayBuffer());
  }
  if (ArrayBuffer.isView(body)) {
    return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  }
  if (body instanceof ArrayBuffer) {
    return new Uint8Array(body);
  }
  throw new Error(`Unsupported body ${String(body)}`);
}

export class MockFetch {
  readonly requests: RecordedRequest[] = [];
  private readonly handlers: { method: string; path: string | RegExp; handler: Handler }[] = [];

  /** Answers `method path` (path without query; a RegExp tests path and query). */
  on(method: string, path: string | RegExp, handler: Handler): this {
    this.handlers.unshift({ method, path, handler });
    return this;
  }

  /** The requests made to a path (without query). */
  to(method: string, path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.url.pathname === path);
  }

  readonly fetch: FetchLike = async (input, init = {}) => {
    const url = new URL(input);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init.headers ?? {}) as Record<string, string>)) {
      headers[k.toLowerCase()] = v;
    }
    const bytes = await readAll(init.body);
    const req: RecordedRequest = {
      method: init.method ?? 'GET',
      url,
      headers,
      body: new TextDecoder().decode(bytes),
      bytes,
    };
    this.requests.push(req);
    const match = this.handlers.find(
      (h) =>
        h.method === req.method &&
        (typeof h.path === 'string' ? h.path === url.pathname : h.path.test(url.pathname + url.search)),
    );
    if (!match) {
      return json({ resourceType: 'OperationOutcome', id: 'not-found', issue: [] }, 404);
    }
    return match.handler(req);
  };
}
