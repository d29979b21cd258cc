import { describe, expect, it } from 'vitest';
import { ResponseCache } from './cache.js';
import {
  ensureTrailingSlash,
  isJsonContentType,
  resolveUrl,
  responseError,
  retryAfterMs,
  toSearchParams,
  withQuery,
} from './http.js';
import { Session } from './session.js';
import { defaultStorage, getJson, LocalStorage, MemoryStorage, setJson } from './storage.js';

describe('query and URL helpers', () => {
  it('turns every query form into search params', () => {
    expect(toSearchParams(undefined).toString()).toBe('');
    expect(toSearchParams('?a=1&b=2').toString()).toBe('a=1&b=2');
    expect(toSearchParams('a=1').toString()).toBe('a=1');
    expect(toSearchParams(new URLSearchParams('x=y')).toString()).toBe('x=y');
    expect(
      toSearchParams([
        ['a', 1],
        ['a', 2],
      ]).toString(),
    ).toBe('a=1&a=2');
    expect(toSearchParams({ a: ['x', 'y'], b: true, c: undefined, d: 0 }).toString()).toBe('a=x&a=y&b=true&d=0');
  });

  it('resolves URLs against the base and appends queries', () => {
    expect(resolveUrl('http://h/', 'fhir/R4/Patient')).toBe('http://h/fhir/R4/Patient');
    expect(resolveUrl('http://h/api/', '/auth/me')).toBe('http://h/api/auth/me');
    expect(resolveUrl('http://h/', 'https://other/x')).toBe('https://other/x');
    expect(resolveUrl('http://h/', new URL('http://z/y'))).toBe('http://z/y');
    expect(withQuery('http://h/P', { a: 1 })).toBe('http://h/P?a=1');
    expect(withQuery('http://h/P?x=1', 'a=2')).toBe('http://h/P?x=1&a=2');
    expect(withQuery('http://h/P', {})).toBe('http://h/P');
    expect(ensureTrailingSlash('http://h')).toBe('http://h/');
  });

  it('knows JSON media types and Retry-After', () => {
    expect(['application/json', 'application/fhir+json; charset=utf-8', 'text/json'].map(isJsonContentType)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['text/plain', null, 'application/octet-stream'].map(isJsonContentType)).toEqual([false, false, false]);
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('makes errors for each status', () => {
    const cases: [number, string][] = [
      [400, 'bad-request'],
      [401, 'unauthorized'],
      [403, 'forbidden'],
      [404, 'not-found'],
      [409, 'conflict'],
      [410, 'gone'],
      [412, 'precondition-failed'],
      [413, 'payload-too-large'],
      [415, 'unsupported-media-type'],
      [422, 'unprocessable-entity'],
      [429, 'too-many-requests'],
      [500, 'server-error'],
      [503, 'service-unavailable'],
    ];
    for (const [status, id] of cases) {
      const err = responseError(status, 'said the server');
      expect([err.outcome.id, err.status, err.message]).toEqual([id, status, 'said the server']);
    }
    expect(responseError(418, undefined).message).toBe('HTTP 418');
    expect(responseError(400, { message: 'bad thing' }).message).toBe('bad thing');
    expect(responseError(400, { error: 'invalid_grant', error_description: 'Code expired' }).message).toBe(
      'Code expired',
    );
    expect(responseError(400, { errors: [{ message: 'Syntax Error' }] }).message).toBe('Syntax Error');
  });
});

describe('ResponseCache', () => {
  it('shares in-flight answers, keeps settled ones for cacheTime, drops failures', async () => {
    let now = 0;
    const cache = new ResponseCache(100, () => now);
    let loads = 0;
    const load = () => Promise.resolve(++loads);
    const [a, b] = await Promise.all([cache.fetch('k', load), cache.fetch('k', load)]);
    expect([a, b, loads]).toEqual([1, 1, 1]);
    now = 99;
    expect(await cache.fetch('k', load)).toBe(1);
    now = 100;
    expect(await cache.fetch('k', load)).toBe(2);
    expect(await cache.fetch('k', load, true)).toBe(3);
    await expect(cache.fetch('bad', () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(cache.has('bad')).toBe(false);
    cache.set('s', { v: 1 });
    expect(await cache.fetch('s', load)).toEqual({ v: 1 });
    cache.invalidate((key) => key === 's');
    expect(cache.has('s')).toBe(false);
  });

  it('with no cache time, keeps answers only while in flight', async () => {
    const cache = new ResponseCache(0);
    let release!: (v: string) => void;
    const first = cache.fetch('k', () => new Promise<string>((r) => (release = r)));
    const second = cache.fetch('k', () => Promise.resolve('other'));
    release('one');
    expect([await first, await second]).toEqual(['one', 'one']);
    expect(cache.size).toBe(0);
    cache.set('x', 1);
    expect(cache.size).toBe(0);
  });

  it('does not let an answer invalidated in flight be kept', async () => {
    const cache = new ResponseCache(1000);
    let release!: (v: string) => void;
    const pending = cache.fetch('k', () => new Promise<string>((r) => (release = r)));
    cache.invalidate(() => true);
    release('stale');
    expect(await pending).toBe('stale');
    expect(await cache.fetch('k', () => Promise.resolve('fresh'))).toBe('fresh');
  });
});

describe('storage and session', () => {
  it('keeps strings and JSON in memory', () => {
    const storage = new MemoryStorage();
    setJson(storage, 'a', { x: 1 });
    expect(getJson(storage, 'a')).toEqual({ x: 1 });
    storage.setItem('broken', '{');
    expect(getJson(storage, 'broken')).toBeUndefined();
    setJson(storage, 'a', undefined);
    expect(storage.getItem('a')).toBeNull();
    expect(defaultStorage()).toBeInstanceOf(MemoryStorage); // Node has no localStorage
  });

  it('prefixes keys in a Web Storage', () => {
    const backing = new MemoryStorage();
    const local = new LocalStorage('app1:', backing);
    local.setItem('k', 'v');
    expect(backing.getItem('app1:k')).toBe('v');
    expect(local.getItem('k')).toBe('v');
    local.removeItem('k');
    expect(backing.length).toBe(0);
    expect(() => new LocalStorage()).toThrow(/localStorage/);
  });

  it('knows when a token is about to expire, with half the lifetime of short tokens as the margin', () => {
    let now = 1_000_000;
    const session = new Session(new MemoryStorage(), 300_000, () => now);
    session.set({ accessToken: 't', expiresAt: now + 3_600_000, issuedAt: now });
    expect(session.isExpiring()).toBe(false);
    now += 3_600_000 - 300_000;
    expect(session.isExpiring()).toBe(true);
    expect(session.isExpired()).toBe(false);
    session.set({ accessToken: 't', expiresAt: now + 60_000, issuedAt: now });
    expect(session.isExpiring()).toBe(false);
    now += 30_000;
    expect(session.isExpiring()).toBe(true);
    session.set({ accessToken: 't' });
    expect(session.isExpiring()).toBe(false);
  });

  it('takes a session another client sharing the storage renewed, instead of renewing it again', async () => {
    const storage = new MemoryStorage();
    let now = 1_000_000;
    const expiring = { accessToken: 'old', refreshToken: 'r-old', expiresAt: now + 1000, issuedAt: now - 3_599_000 };
    storage.setItem('activeLogin', JSON.stringify(expiring));
    const tab1 = new Session(storage, 300_000, () => now);
    const tab2 = new Session(storage, 300_000, () => now);
    const renewedBy: string[] = [];
    const renew = (tab: string) => async () => {
      renewedBy.push(tab);
      return { accessToken: `new-${tab}`, refreshToken: `r-${tab}`, expiresAt: now + 3_600_000, issuedAt: now };
    };
    await tab1.renew(renew('tab1'));
    await tab2.renew(renew('tab2'));
    expect(renewedBy).toEqual(['tab1']);
    expect(tab2.state).toMatchObject({ accessToken: 'new-tab1', refreshToken: 'r-tab1' });
    // A stored session that is itself about to expire is renewed.
    now += 3_600_000;
    await tab2.renew(renew('tab2'));
    expect(renewedBy).toEqual(['tab1', 'tab2']);
    expect(JSON.parse(storage.getItem('activeLogin') as string).accessToken).toBe('new-tab2');
  });

  it('renews once for concurrent callers and stores the result', async () => {
    const storage = new MemoryStorage();
    const session = new Session(storage, 0);
    let renewals = 0;
    const renew = async () => ({ accessToken: `new-${++renewals}` });
    await Promise.all([session.renew(renew), session.renew(renew), session.renew(renew)]);
    expect(renewals).toBe(1);
    expect(new Session(storage, 0).accessToken).toBe('new-1');
    await expect(session.renew(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(session.isRenewing).toBe(false);
    expect(session.accessToken).toBe('new-1');
  });
});
