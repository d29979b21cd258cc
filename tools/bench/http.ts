import { Pool } from 'undici';

/** A keep-alive HTTP client for the benchmark, with the caller's bearer token. */
export class BenchClient {
  private readonly pool: Pool;
  private readonly origin: string;
  private readonly basePath: string;
  headers: Record<string, string> = {};

  constructor(baseUrl: string, connections: number) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/$/, '');
    this.pool = new Pool(this.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  }

  async request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
    const headers: Record<string, string> = { accept: 'application/fhir+json', ...this.headers, ...extraHeaders };
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] ??= 'application/fhir+json';
    }
    const res = await this.pool.request({ method, path: `${this.basePath}${path}`, headers, body: payload });
    const text = await res.body.text();
    return { status: res.statusCode, text, headers: res.headers };
  }

  /** Like request, but throws on an unexpected status so the load runner counts an error. */
  async expect(
    status: number | number[],
    method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    path: string,
    body?: unknown,
    extraHeaders?: Record<string, string>,
  ): Promise<string> {
    const res = await this.request(method, path, body, extraHeaders);
    const ok = Array.isArray(status) ? status.includes(res.status) : res.status === status;
    if (!ok) {
      throw new Error(`${method} ${path} -> ${res.status}: ${res.text.slice(0, 300)}`);
    }
    return res.text;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
