/** The upload transports: the XMLHttpRequest fetch of browsers (with a stand-in XHR) and the progress stream. */
import { describe, expect, it } from 'vitest';
import { getXhr, progressStream, toBytes, xhrFetch } from './upload.js';
import type { UploadProgress } from './types.js';

/** An XMLHttpRequest stand-in that records the request and answers as told. */
class FakeXhr {
  static last: FakeXhr;
  static answer: { status: number; headers: string; body: string | null; fail?: 'error' } = {
    status: 201,
    headers: 'Content-Type: application/fhir+json\r\nETag: W/"1"\r\n',
    body: '{"resourceType":"Binary","id":"b1"}',
  };
  method = '';
  url = '';
  headers: Record<string, string> = {};
  responseType = '';
  response: unknown = null;
  status = 0;
  statusText = '';
  sent: unknown;
  aborted = false;
  upload: { onprogress: ((e: UploadProgress) => void) | null } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;

  constructor() {
    FakeXhr.last = this;
  }
  open(method: string, url: string): void {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(name: string, value: string): void {
    this.headers[name] = value;
  }
  getAllResponseHeaders(): string {
    return FakeXhr.answer.headers;
  }
  abort(): void {
    this.aborted = true;
    this.onabort?.();
  }
  send(body?: unknown): void {
    this.sent = body;
    const size = (body as Uint8Array).byteLength;
    queueMicrotask(() => {
      if (this.aborted) {
        return;
      }
      if (FakeXhr.answer.fail) {
        this.onerror?.();
        return;
      }
      this.upload.onprogress?.({ loaded: size / 2, total: size, lengthComputable: true });
      this.upload.onprogress?.({ loaded: size, total: size, lengthComputable: true });
      this.status = FakeXhr.answer.status;
      this.response = FakeXhr.answer.body === null ? null : new TextEncoder().encode(FakeXhr.answer.body).buffer;
      this.onload?.();
    });
  }
}

describe('xhrFetch', () => {
  it('sends through XMLHttpRequest, reports its upload progress and answers with a Response', async () => {
    const progress: number[] = [];
    const fetchXhr = xhrFetch(FakeXhr, (e) => progress.push(e.loaded));
    const body = new Uint8Array(1000);
    const response = await fetchXhr('http://h/fhir/R4/Binary', {
      method: 'POST',
      headers: { 'Content-Type': 'image/png', Authorization: 'Bearer t' },
      body,
    });
    expect(FakeXhr.last).toMatchObject({ method: 'POST', url: 'http://h/fhir/R4/Binary', responseType: 'arraybuffer' });
    expect(FakeXhr.last.headers).toEqual({ 'Content-Type': 'image/png', Authorization: 'Bearer t' });
    expect(FakeXhr.last.sent).toBe(body);
    expect(progress).toEqual([500, 1000]);
    expect(response.status).toBe(201);
    expect(response.headers.get('etag')).toBe('W/"1"');
    expect(response.headers.get('content-type')).toBe('application/fhir+json');
    expect(await response.json()).toEqual({ resourceType: 'Binary', id: 'b1' });
  });

  it('answers a 204 without a body, fails on a network error, and aborts with the signal', async () => {
    FakeXhr.answer = { status: 204, headers: '', body: '' };
    expect(
      (await xhrFetch(FakeXhr, () => undefined)('http://h/x', { method: 'POST', body: new Uint8Array(2) })).status,
    ).toBe(204);
    FakeXhr.answer = { status: 0, headers: '', body: null, fail: 'error' };
    await expect(xhrFetch(FakeXhr, () => undefined)('http://h/x', { body: new Uint8Array(2) })).rejects.toThrow(
      TypeError,
    );
    const controller = new AbortController();
    const pending = xhrFetch(FakeXhr, () => undefined)('http://h/x', {
      body: new Uint8Array(2),
      signal: controller.signal,
    });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('is only used where XMLHttpRequest exists', () => {
    expect(getXhr()).toBeUndefined(); // Node
  });
});

describe('progressStream and toBytes', () => {
  it('streams the bytes in 64 KiB chunks, reporting each', async () => {
    const bytes = new Uint8Array(150_000).map((_, i) => i % 256);
    const seen: number[] = [];
    const chunks: Uint8Array[] = [];
    const reader = progressStream(bytes, (e) => seen.push(e.loaded)).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      chunks.push(r.value);
    }
    expect(seen).toEqual([65_536, 131_072, 150_000]);
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(bytes));
  });

  it('reads strings, buffers, views and blobs', async () => {
    expect([...(await toBytes('hé'))]).toEqual([104, 195, 169]);
    expect([...(await toBytes(new Uint8Array([1, 2, 3]).buffer))]).toEqual([1, 2, 3]);
    expect([...(await toBytes(new Uint16Array([258]).subarray(0, 1)))]).toEqual([2, 1]);
    expect([...(await toBytes(new Blob(['ab'])))]).toEqual([97, 98]);
  });
});
