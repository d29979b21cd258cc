import { astmRuntime, hl7Runtime } from '@hearth/core';

/**
 * The script that runs first in every bot context, before the bot's own code (both are compiled
 * together, once per isolate and code version). It turns the two
 * host functions (plain functions made by ivm.Callback: no isolated-vm object ever reaches the
 * bot) into the bot's environment: `console`, `fetch`, the `client`, and `__hearthMain`, which
 * loads the bot module and calls its handler. Host calls are asynchronous: `__hostSend` starts a
 * call and returns at once; the host answers later through `__hearthResolve`.
 *
 * The host functions are captured in this closure and removed from the global object.
 *
 * HL7 v2: the SDK's own Hl7Message code runs in the isolate (`hl7Runtime`, self-contained), so a
 * bot whose input is `x-application/hl7-v2+er7` receives a parsed Hl7Message and may return one
 * (sent back as text); `require('@hearth/core')` gives it Hl7Message and buildAck, and the ASTM
 * record layer (`astmRuntime`: parseAstmTransmission, astmValue, formatAstmRecord, ...).
 */
export function sandboxPrelude(fhirBase: string, baseUrl: string): string {
  return PRELUDE.replace('__HEARTH_FHIR_BASE__', JSON.stringify(fhirBase))
    .replace('__HEARTH_BASE_URL__', JSON.stringify(baseUrl))
    .replace('__HEARTH_HL7_RUNTIME__', () => `(${hl7Runtime.toString()})()`)
    .replace('__HEARTH_ASTM_RUNTIME__', () => `(${astmRuntime.toString()})()`);
}

const PRELUDE = String.raw`
'use strict';
(function () {
  const g = globalThis;
  const hostSend = g.__hostSend;
  const hostLog = g.__hostLog;
  delete g.__hostSend;
  delete g.__hostLog;
  const pending = new Map();
  let nextId = 1;

  function call(method, args) {
    return new Promise(function (resolve, reject) {
      const id = nextId++;
      pending.set(id, { resolve: resolve, reject: reject });
      hostSend(id, method, JSON.stringify(args === undefined ? [] : args));
    });
  }

  Object.defineProperty(g, '__hearthResolve', {
    value: function (id, ok, json) {
      const p = pending.get(id);
      if (!p) return;
      pending.delete(id);
      const value = json === undefined || json === '' ? undefined : JSON.parse(json);
      if (ok) {
        p.resolve(value);
      } else {
        const err = new Error((value && value.message) || 'Request failed');
        if (value && value.outcome) err.outcome = value.outcome;
        if (value && value.status) err.status = value.status;
        p.reject(err);
      }
    },
  });

  function show(v) {
    if (typeof v === 'string') return v;
    if (v instanceof Error) return v.stack || String(v);
    try {
      const s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch (e) {
      return String(v);
    }
  }
  function logger(level) {
    return function () {
      const parts = [];
      for (let i = 0; i < arguments.length; i++) parts.push(show(arguments[i]));
      hostLog(level, parts.join(' '));
    };
  }
  g.console = {
    log: logger('info'),
    info: logger('info'),
    debug: logger('debug'),
    warn: logger('warn'),
    error: logger('error'),
    trace: logger('debug'),
  };

  function Headers(init) {
    const map = {};
    if (init) {
      for (const k of Object.keys(init)) map[k.toLowerCase()] = String(init[k]);
    }
    this.get = function (name) {
      const v = map[String(name).toLowerCase()];
      return v === undefined ? null : v;
    };
    this.has = function (name) {
      return String(name).toLowerCase() in map;
    };
    this.forEach = function (fn) {
      for (const k of Object.keys(map)) fn(map[k], k);
    };
    this.entries = function () {
      return Object.keys(map).map(function (k) { return [k, map[k]]; })[Symbol.iterator]();
    };
  }

  function plainHeaders(h) {
    if (!h) return {};
    if (typeof h.forEach === 'function' && !Array.isArray(h)) {
      const out = {};
      h.forEach(function (v, k) { out[k] = String(v); });
      return out;
    }
    if (Array.isArray(h)) {
      const out = {};
      for (const pair of h) out[pair[0]] = String(pair[1]);
      return out;
    }
    const out = {};
    for (const k of Object.keys(h)) out[k] = String(h[k]);
    return out;
  }

  g.fetch = async function fetch(input, init) {
    init = init || {};
    const url = typeof input === 'string' ? input : input && input.url ? input.url : String(input);
    let body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string') {
      body = JSON.stringify(body);
    }
    const r = await call('$fetch', [{ url: url, method: init.method || 'GET', headers: plainHeaders(init.headers), body: body == null ? undefined : body }]);
    const text = r.body;
    return {
      ok: r.status >= 200 && r.status < 300,
      status: r.status,
      statusText: r.statusText,
      url: r.url,
      redirected: r.url !== url,
      headers: new Headers(r.headers),
      text: async function () { return text; },
      json: async function () { return JSON.parse(text); },
    };
  };

  function queryString(query) {
    if (query === undefined || query === null) return '';
    if (typeof query === 'string') return query.replace(/^\?/, '');
    const parts = [];
    const add = function (k, v) { parts.push(encodeURIComponent(k) + '=' + encodeURIComponent(String(v))); };
    if (typeof query.forEach === 'function' && !Array.isArray(query)) {
      query.forEach(function (v, k) { add(k, v); });
    } else {
      for (const k of Object.keys(query)) {
        const v = query[k];
        if (Array.isArray(v)) v.forEach(function (x) { add(k, x); });
        else if (v !== undefined) add(k, v);
      }
    }
    return parts.join('&');
  }

  function parseReference(ref) {
    const s = typeof ref === 'string' ? ref : ref && ref.reference;
    const m = /^([A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/.exec(s || '');
    if (!m) throw new Error('Not a local reference: ' + s);
    return [m[1], m[2]];
  }

  const client = {
    readResource: function (resourceType, id) { return call('read', [resourceType, id]); },
    readReference: function (reference) { const p = parseReference(reference); return call('read', p); },
    readHistory: function (resourceType, id) { return call('history', [resourceType, id]); },
    readVersion: function (resourceType, id, vid) { return call('vread', [resourceType, id, String(vid)]); },
    search: function (resourceType, query) { return call('search', [resourceType, queryString(query)]); },
    searchResources: async function (resourceType, query) {
      const bundle = await call('search', [resourceType, queryString(query)]);
      const list = (bundle.entry || []).map(function (e) { return e.resource; }).filter(function (r) { return r && r.resourceType === resourceType; });
      Object.defineProperty(list, 'bundle', { value: bundle, enumerable: false });
      return list;
    },
    searchOne: async function (resourceType, query) {
      const q = queryString(query);
      const bundle = await call('search', [resourceType, (q ? q + '&' : '') + '_count=1']);
      const e = (bundle.entry || []).find(function (x) { return x.resource && x.resource.resourceType === resourceType; });
      return e ? e.resource : undefined;
    },
    createResource: function (resource) { return call('create', [resource]); },
    createResourceIfNoneExist: function (resource, query) { return call('createIfNoneExist', [resource, queryString(query)]); },
    updateResource: function (resource) { return call('update', [resource]); },
    upsertResource: function (resource, query) { return call('upsert', [resource, queryString(query)]); },
    patchResource: function (resourceType, id, operations) { return call('patch', [resourceType, id, operations]); },
    deleteResource: function (resourceType, id) { return call('delete', [resourceType, id]); },
    executeBot: function (idOrIdentifier, input, contentType) { return call('executeBot', [idOrIdentifier, input, contentType]); },
    fhirUrl: function () {
      return fhirBase + Array.prototype.slice.call(arguments).join('/');
    },
    getBaseUrl: function () { return baseUrl; },
  };
  const fhirBase = __HEARTH_FHIR_BASE__;
  const baseUrl = __HEARTH_BASE_URL__;
  Object.freeze(client);

  const hl7 = __HEARTH_HL7_RUNTIME__;
  const core = Object.freeze(Object.assign({}, hl7, __HEARTH_ASTM_RUNTIME__));
  const hl7ContentType = /^x-application\/hl7-v2\+er7\s*(;|$)/i;

  function requireStub(name) {
    if (name === '@hearth/core') return core;
    throw new Error('Cannot load "' + name + '": bots run in a sandbox with no Node.js modules; use the client and fetch');
  }

  Object.defineProperty(g, '__hearthMain', {
    value: async function (eventJson) {
      const factory = g.__hearthModule;
      delete g.__hearthModule;
      const module = { exports: {} };
      factory.call(module.exports, module.exports, requireStub, module);
      const exported = module.exports;
      const handler =
        typeof exported.handler === 'function'
          ? exported.handler
          : exported.default && typeof exported.default.handler === 'function'
            ? exported.default.handler
            : typeof exported.default === 'function'
              ? exported.default
              : undefined;
      if (!handler) {
        throw new Error('The bot module does not export a function named handler');
      }
      const event = JSON.parse(eventJson);
      if (event && typeof event.input === 'string' && hl7ContentType.test(event.contentType || '')) {
        event.input = hl7.Hl7Message.parse(event.input);
      }
      let result = await handler(client, event);
      if (result instanceof hl7.Hl7Message) result = result.toString();
      if (result === undefined) return '';
      return JSON.stringify({ value: result });
    },
  });
})();
`;
