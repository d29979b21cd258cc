/**
 * The request pipeline every client call goes through: URL resolution, headers, the bearer token
 * (renewed before it expires, and once more if the server answers 401), the GET cache, retries of
 * throttled GETs, and errors as OperationOutcomeError. Also the get/post/put/patch/delete escape
 * hatches for any endpoint.
 */
import { OperationOutcomeError, unauthorizedWith } from '../outcome.js';
import { ResponseCache } from './cache.js';
import {
  DEFAULT_ACCEPT,
  ensureTrailingSlash,
  FHIR_JSON,
  FORM_URLENCODED,
  networkError,
  readBody,
  resolveUrl,
  responseError,
  retryAfterMs,
  sleep,
  toSearchParams,
  withQuery,
  type QueryTypes,
} from './http.js';
import { Session } from './session.js';
import { defaultStorage, type ClientStorage } from './storage.js';
import type { FetchLike, HearthClientOptions, LoginState, RequestBody, RequestOptions } from './types.js';

/** Events of the client (see addEventListener). */
export type ClientEvent = 'change' | 'unauthenticated';

/** What a request's answer is read as. */
export type ResponseType = 'json' | 'blob' | 'response';

/** One request through the pipeline. */
export interface SendRequest {
  method: string;
  url: string;
  /** The body, or a function making a fresh one per attempt (streams can be sent only once). */
  body?: RequestBody | (() => RequestBody);
  contentType?: string;
  options?: RequestOptions;
  responseType?: ResponseType;
  /** A transport other than the client's fetch (the browser upload with progress). */
  fetch?: FetchLike;
}

const MAX_RETRY_DELAY_MS = 30_000;

function isBrowser(): boolean {
  return typeof (globalThis as { window?: unknown }).window !== 'undefined';
}

/** True for a value sent as is rather than as JSON. */
function isRawBody(body: unknown): body is RequestBody {
  return (
    typeof body === 'string' ||
    body instanceof URLSearchParams ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob !== 'undefined' && body instanceof Blob) ||
    (typeof FormData !== 'undefined' && body instanceof FormData) ||
    (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream)
  );
}

export class ClientBase {
  protected readonly baseUrl: string;
  protected readonly fhirBaseUrl: string;
  protected readonly clientId: string | undefined;
  protected readonly storage: ClientStorage;
  protected readonly cache: ResponseCache;
  protected readonly session: Session;
  protected readonly options: HearthClientOptions;
  private readonly fetchImpl: FetchLike;

  constructor(options: HearthClientOptions = {}) {
    this.options = options;
    this.baseUrl = ensureTrailingSlash(options.baseUrl ?? 'http://localhost:8103/');
    this.fhirBaseUrl = ensureTrailingSlash(resolveUrl(this.baseUrl, options.fhirUrlPath ?? 'fhir/R4/'));
    this.clientId = options.clientId;
    const globalFetch = globalThis.fetch as FetchLike | undefined;
    if (!options.fetch && !globalFetch) {
      throw new Error('No fetch available: pass options.fetch');
    }
    // The global fetch must be called unbound from its object in some browsers ("Illegal invocation").
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.storage = options.storage ?? defaultStorage();
    this.cache = new ResponseCache(options.cacheTime ?? (isBrowser() ? 60_000 : 0));
    this.session = new Session(this.storage, options.refreshGracePeriod ?? 300_000, undefined, () =>
      this.emit('change'),
    );
  }

  private readonly listeners = new Map<ClientEvent, Set<() => void>>();

  /**
   * Listens to the client: 'change' after every change of the session (sign-in, token renewal,
   * sign-out), 'unauthenticated' when the server refused the session and it could not be renewed.
   */
  addEventListener(event: ClientEvent, listener: () => void): void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
  }

  /** Stops calling a listener added with addEventListener. */
  removeEventListener(event: ClientEvent, listener: () => void): void {
    this.listeners.get(event)?.delete(listener);
  }

  private emit(event: ClientEvent): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        listener();
      } catch (err) {
        // A listener's failure must not break the request that changed the session.
        console.error(err);
      }
    }
  }

  /** The server's base URL, ending in '/'. */
  getBaseUrl(): string {
    return this.baseUrl;
  }

  /** The FHIR base URL, ending in '/'. */
  getFhirBaseUrl(): string {
    return this.fhirBaseUrl;
  }

  /** A URL under the FHIR base: `fhirUrl('Patient', '123')` → '.../fhir/R4/Patient/123'. */
  fhirUrl(...path: string[]): string {
    return this.fhirBaseUrl + path.map((p) => p.replace(/^\/+|\/+$/g, '')).join('/');
  }

  /** A search URL: `fhirSearchUrl('Patient', { name: 'smith' })` → '.../fhir/R4/Patient?name=smith'. */
  fhirSearchUrl(resourceType: string, query?: QueryTypes): string {
    return withQuery(this.fhirUrl(resourceType), query);
  }

  /** The current access token, if signed in. */
  getAccessToken(): string | undefined {
    return this.session.accessToken;
  }

  /** The stored session, if signed in. */
  getActiveLogin(): LoginState | undefined {
    return this.session.state;
  }

  /** GET any URL (relative to the base URL); JSON answers are parsed. */
  get<T = unknown>(url: string | URL, options?: RequestOptions): Promise<T> {
    return this.send<T>({ method: 'GET', url: url.toString(), options });
  }

  /** POST any URL. Objects are sent as JSON (FHIR JSON unless `contentType` says otherwise). */
  post<T = unknown>(url: string | URL, body?: unknown, contentType?: string, options?: RequestOptions): Promise<T> {
    return this.sendWithBody<T>('POST', url, body, contentType, options);
  }

  /** PUT any URL. */
  put<T = unknown>(url: string | URL, body?: unknown, contentType?: string, options?: RequestOptions): Promise<T> {
    return this.sendWithBody<T>('PUT', url, body, contentType, options);
  }

  /** PATCH any URL (JSON Patch by default). */
  patch<T = unknown>(url: string | URL, body?: unknown, contentType?: string, options?: RequestOptions): Promise<T> {
    return this.sendWithBody<T>('PATCH', url, body, contentType ?? 'application/json-patch+json', options);
  }

  /** DELETE any URL. */
  delete<T = unknown>(url: string | URL, options?: RequestOptions): Promise<T> {
    return this.send<T>({ method: 'DELETE', url: url.toString(), options });
  }

  /** Forgets every cached answer. */
  invalidateAll(): void {
    this.cache.clear();
  }

  /** Forgets the cached answer of one URL. */
  invalidateUrl(url: string | URL): void {
    this.cache.delete(resolveUrl(this.baseUrl, url));
  }

  /** Forgets cached searches and histories of a resource type (and system-level ones). */
  invalidateSearches(resourceType: string): void {
    this.cache.invalidate((key) => this.isSearchOf(key, resourceType));
  }

  /** Forgets everything cached about one resource, and the searches that might have found it. */
  protected invalidateResource(resourceType: string, id?: string): void {
    const instance = id ? `${this.fhirUrl(resourceType, id)}` : undefined;
    this.cache.invalidate(
      (key) =>
        this.isSearchOf(key, resourceType) ||
        (instance !== undefined &&
          (key === instance || key.startsWith(`${instance}/`) || key.startsWith(`${instance}?`))),
    );
  }

  private isSearchOf(key: string, resourceType: string): boolean {
    if (!key.startsWith(this.fhirBaseUrl)) {
      return false;
    }
    const path = key.slice(this.fhirBaseUrl.length).split('?')[0];
    const parts = path.split('/');
    // System level ('', _history, _search), type level (Type, Type/_history, Type/_search), and
    // compartment searches (Patient/123/Type).
    return (
      parts[0] === '' ||
      parts[0] === '_history' ||
      parts[0] === '_search' ||
      (parts[0] === resourceType && (parts.length === 1 || parts[1] === '_history' || parts[1] === '_search')) ||
      (parts.length === 3 && parts[2] === resourceType)
    );
  }

  /** After a write to `url`: forget what it may have changed. */
  private invalidateAfterWrite(url: string): void {
    if (!url.startsWith(this.fhirBaseUrl)) {
      // Administration creates and changes resources; sign-in steps and token calls change none.
      const path = url.startsWith(this.baseUrl) ? url.slice(this.baseUrl.length).replace(/^api\//, '') : '';
      if (path === '' || path.startsWith('admin/') || path.startsWith('scim/')) {
        this.cache.clear();
      }
      return;
    }
    const [type, id] = url.slice(this.fhirBaseUrl.length).split('?')[0].split('/');
    if (!type || type.startsWith('$') || type.startsWith('_')) {
      this.cache.clear();
    } else {
      this.invalidateResource(type, id && !id.startsWith('$') && !id.startsWith('_') ? id : undefined);
    }
  }

  private sendWithBody<T>(
    method: string,
    url: string | URL,
    body: unknown,
    contentType: string | undefined,
    options: RequestOptions | undefined,
  ): Promise<T> {
    if (body === undefined || body === null) {
      return this.send<T>({ method, url: url.toString(), contentType, options });
    }
    if (isRawBody(body)) {
      return this.send<T>({ method, url: url.toString(), body, contentType, options });
    }
    const type = contentType ?? FHIR_JSON;
    const encoded = type === FORM_URLENCODED ? toSearchParams(body as QueryTypes).toString() : JSON.stringify(body);
    return this.send<T>({ method, url: url.toString(), body: encoded, contentType: type, options });
  }

  /** Sends one request through the pipeline. GETs go through the cache. */
  protected send<T>(request: SendRequest): Promise<T> {
    const url = resolveUrl(this.baseUrl, request.url);
    const req = { ...request, url };
    // Only plain GETs share answers: other methods, other response types, and GETs with headers
    // of their own (another Accept may mean another representation) go straight out.
    if (request.method !== 'GET' || (request.responseType ?? 'json') !== 'json' || request.options?.headers) {
      const result = this.sendUncached<T>(req);
      if (request.method !== 'GET') {
        // Invalidate now (requests issued meanwhile must not get stale answers) and once answered.
        this.invalidateAfterWrite(url);
        return result.finally(() => this.invalidateAfterWrite(url));
      }
      return result;
    }
    const mode = request.options?.cache;
    const reload = mode === 'no-cache' || mode === 'reload' || mode === 'no-store';
    return this.cache.fetch<T>(url, () => this.sendUncached<T>(req), reload);
  }

  private async sendUncached<T>(request: SendRequest): Promise<T> {
    const options = request.options ?? {};
    // The token goes to this server only: never to another origin a URL may name (an
    // Attachment's url, an absolute reference), which could be anyone's.
    const useAuth = !options.noAuth && this.isOwnUrl(request.url);
    if (useAuth && this.session.state && this.session.isExpiring() && this.canRenewSession()) {
      await this.renewOrSignOut();
    }
    let response = await this.attempt(request, useAuth);
    if (response.status === 401 && useAuth && this.session.state) {
      // The token was refused: renew it once and try again, or give up on the session.
      if (this.canRenewSession()) {
        await this.renewOrSignOut();
        response = await this.attempt(request, useAuth);
      }
      if (response.status === 401) {
        this.endSession();
      }
    }
    const retries = request.method === 'GET' ? (this.options.maxRetries ?? 2) : 0;
    for (let i = 0; i < retries && (response.status === 429 || response.status === 503); i++) {
      const delay = retryAfterMs(response.headers.get('retry-after')) ?? 500 * 2 ** i;
      await response.body?.cancel().catch(() => undefined);
      await sleep(Math.min(delay, MAX_RETRY_DELAY_MS));
      response = await this.attempt(request, useAuth);
    }
    if (!response.ok && response.status !== 304) {
      throw responseError(response.status, await readBody(response));
    }
    switch (request.responseType ?? 'json') {
      case 'response':
        return response as T;
      case 'blob':
        return (await response.blob()) as T;
      default:
        return (await readBody(response)) as T;
    }
  }

  /** Whether a URL is on this client's server (same origin as the base URL). */
  protected isOwnUrl(url: string): boolean {
    // A relative base URL (a page's own server) resolves against the page.
    const page = (globalThis as { location?: { href?: string } }).location?.href;
    try {
      return new URL(url, page).origin === new URL(this.baseUrl, page).origin;
    } catch {
      return false;
    }
  }

  private async attempt(request: SendRequest, useAuth: boolean): Promise<Response> {
    const options = request.options ?? {};
    const headers: Record<string, string> = { Accept: DEFAULT_ACCEPT, ...this.options.headers, ...options.headers };
    if (request.contentType) {
      headers['Content-Type'] = request.contentType;
    }
    const token = this.session.accessToken;
    if (useAuth && token) {
      headers.Authorization = `Bearer ${token}`;
    }
    const body = typeof request.body === 'function' ? request.body() : request.body;
    const { cache: _cache, noAuth: _noAuth, headers: _headers, ...init } = options;
    const requestInit: RequestInit & { duplex?: 'half' } = { ...init, method: request.method, headers, body };
    if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) {
      requestInit.duplex = 'half'; // required by fetch for a streamed request body
    }
    try {
      return await (request.fetch ?? this.fetchImpl)(request.url, requestInit);
    } catch (err) {
      if (err instanceof OperationOutcomeError || (err instanceof Error && err.name === 'AbortError')) {
        throw err;
      }
      throw networkError(err);
    }
  }

  private async renewOrSignOut(): Promise<void> {
    try {
      await this.session.renew(() => this.renewSession());
    } catch (err) {
      this.endSession();
      throw err instanceof OperationOutcomeError
        ? err
        : new OperationOutcomeError(unauthorizedWith('The session could not be renewed'), err);
    }
  }

  /** Drops the session after the server refused it, and tells the app. */
  protected endSession(): void {
    this.clearSession();
    this.emit('unauthenticated');
    this.options.onUnauthenticated?.();
  }

  /** Forgets the session and everything cached under it. */
  protected clearSession(): void {
    this.session.set(undefined);
    this.cache.clear();
  }

  /** Whether the session can be renewed without the user (a refresh token, or client credentials). */
  protected canRenewSession(): boolean {
    return false;
  }

  /** Renews the session; only called when canRenewSession() says it can. */
  protected renewSession(): Promise<LoginState> {
    return Promise.reject(new OperationOutcomeError(unauthorizedWith('The session cannot be renewed')));
  }
}
