/**
 * Request bodies that report upload progress. In a browser, fetch cannot report it, so the
 * request goes through XMLHttpRequest (upload.onprogress). Elsewhere (Node) the body is streamed
 * in chunks and progress is reported as each chunk is taken for sending.
 */
import type { FetchLike, RequestBody, BinarySource, UploadProgress } from './types.js';

/** Chunk size of a streamed upload. */
const CHUNK_BYTES = 64 * 1024;

/** The bytes of a Binary source, and their count. */
export async function toBytes(data: BinarySource): Promise<Uint8Array> {
  if (typeof data === 'string') {
    return new TextEncoder().encode(data);
  }
  if (data instanceof ArrayBuffer) {
    return new Uint8Array(data);
  }
  if (ArrayBuffer.isView(data)) {
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  return new Uint8Array(await data.arrayBuffer());
}

/** A stream of the bytes in chunks, reporting progress as each chunk is pulled. */
export function progressStream(bytes: Uint8Array, onProgress: (e: UploadProgress) => void): ReadableStream<Uint8Array> {
  let offset = 0;
  const total = bytes.byteLength;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= total) {
        controller.close();
        return;
      }
      const end = Math.min(offset + CHUNK_BYTES, total);
      controller.enqueue(bytes.slice(offset, end));
      offset = end;
      onProgress({ loaded: offset, total, lengthComputable: true });
    },
  });
}

interface XhrLike {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  getAllResponseHeaders(): string;
  send(body?: unknown): void;
  abort(): void;
  responseType: string;
  readonly response: unknown;
  readonly status: number;
  readonly statusText: string;
  upload: { onprogress: ((e: UploadProgress) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}

type XhrConstructor = new () => XhrLike;

/** XMLHttpRequest, where there is one (a browser). */
export function getXhr(): XhrConstructor | undefined {
  return (globalThis as { XMLHttpRequest?: XhrConstructor }).XMLHttpRequest;
}

/** Statuses whose response must have no body (fetch.spec.whatwg.org/#null-body-status). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A fetch over XMLHttpRequest that reports upload progress; it answers with a standard Response. */
export function xhrFetch(Xhr: XhrConstructor, onProgress: (e: UploadProgress) => void): FetchLike {
  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new Xhr();
      xhr.open(init.method ?? 'GET', url);
      xhr.responseType = 'arraybuffer';
      for (const [name, value] of Object.entries((init.headers ?? {}) as Record<string, string>)) {
        xhr.setRequestHeader(name, value);
      }
      xhr.upload.onprogress = (e) =>
        onProgress({ loaded: e.loaded, total: e.total, lengthComputable: e.lengthComputable });
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr
          .getAllResponseHeaders()
          .trim()
          .split(/[\r\n]+/)) {
          const i = line.indexOf(':');
          if (i > 0) {
            headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
          }
        }
        const body = NULL_BODY.has(xhr.status) ? null : (xhr.response as ArrayBuffer | null);
        resolve(new Response(body, { status: xhr.status, statusText: xhr.statusText, headers }));
      };
      xhr.onerror = () => reject(new TypeError('Network request failed'));
      xhr.onabort = () => reject(Object.assign(new Error('The upload was aborted'), { name: 'AbortError' }));
      init.signal?.addEventListener('abort', () => xhr.abort());
      xhr.send(init.body as RequestBody | undefined);
    });
}
