import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { inSpan } from '../observability/telemetry.js';

/**
 * Outbound HTTP for user-configured destinations (rest-hook subscriptions, a bot's fetch) without
 * server-side request forgery: a destination may not be a loopback, private, link-local, carrier
 * NAT, multicast or cloud metadata address unless the administrator allow-lists it. The check is
 * made on the addresses DNS returns, inside the connection's own lookup, so the address checked is
 * the address connected to (no DNS rebinding between check and connect), and again on every
 * redirect. (OWASP SSRF Prevention Cheat Sheet; RFC 6890 special-purpose address registries.)
 */

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (also Alibaba Cloud metadata 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
BLOCKED.addAddress('168.63.129.16', 'ipv4'); // Azure platform endpoint (metadata, DHCP, DNS)
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** IPv6 forms that carry an IPv4 address, which is then what the packet reaches. */
function embeddedIPv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:(?:0{1,4}:)?|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) {
    return dotted[1];
  }
  const hex = /^(?:::ffff:(?:0{1,4}:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4}):/.exec(lower);
  if (sixToFour) {
    const hi = parseInt(sixToFour[1], 16);
    const lo = parseInt(sixToFour[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

export class OutboundBlockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

/** Resolves a host name to all its addresses (node:dns lookup with `all: true`). */
export type ResolveAll = (hostname: string, family: number) => Promise<LookupAddress[]>;

const systemResolver: ResolveAll = (hostname, family) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, family }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

export interface OutboundPolicyOptions {
  /** The resolver (default: the system's, as node:net would use); tests give names chosen addresses. */
  resolve?: ResolveAll;
  /**
   * With traces exported: a client span per request (under the current span), and the W3C
   * `traceparent` header sent, so a receiver that traces continues the trace.
   */
  tracer?: Tracer;
}

/** Decides which destinations outbound requests may reach. */
export class OutboundPolicy {
  /**
   * Keep-alive connection pools: a pooled connection was checked when it was opened (the lookup
   * below), so reusing it reaches the same permitted address.
   */
  readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 });
  readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 });
  private readonly allowedAddresses = new BlockList();
  private readonly allowedHosts: string[] = [];
  private readonly allowedSuffixes: string[] = [];

  private readonly resolveAll: ResolveAll;
  readonly tracer?: Tracer;

  /** `allowList`: host names ('localhost', '*.corp.example'), IP addresses or CIDR ranges. */
  constructor(allowList: string[] = [], options: OutboundPolicyOptions = {}) {
    this.resolveAll = options.resolve ?? systemResolver;
    this.tracer = options.tracer;
    for (const raw of allowList) {
      const entry = raw.trim().toLowerCase();
      if (!entry) {
        continue;
      }
      const [net, prefix] = entry.split('/');
      const family = isIP(net.replace(/^\[|\]$/g, ''));
      if (family) {
        const type = family === 4 ? 'ipv4' : 'ipv6';
        const address = net.replace(/^\[|\]$/g, '');
        if (prefix !== undefined) {
          this.allowedAddresses.addSubnet(address, Number(prefix), type);
        } else {
          this.allowedAddresses.addAddress(address, type);
        }
      } else if (entry.startsWith('*.')) {
        this.allowedSuffixes.push(entry.slice(1));
      } else {
        this.allowedHosts.push(entry);
      }
    }
  }

  private hostAllowed(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    return this.allowedHosts.includes(host) || this.allowedSuffixes.some((s) => host.endsWith(s));
  }

  private addressAllowed(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.allowedAddresses.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** Why an address may not be reached from a host name, or undefined when it may. */
  blockedReason(hostname: string, address: string): string | undefined {
    if (this.hostAllowed(hostname) || this.addressAllowed(address)) {
      return undefined;
    }
    const family = isIP(address);
    if (family === 0) {
      return `"${address}" is not an IP address`;
    }
    const v4 = family === 6 ? embeddedIPv4(address) : address;
    if (v4 && v4 !== address && this.addressAllowed(v4)) {
      return undefined;
    }
    const blocked = (v4 !== undefined && BLOCKED.check(v4, 'ipv4')) || (family === 6 && BLOCKED.check(address, 'ipv6'));
    return blocked
      ? `${hostname === address ? address : `${hostname} (${address})`} is a loopback, private, link-local or metadata address`
      : undefined;
  }

  /** Throws OutboundBlockedError unless the URL may be requested (scheme, literal address). */
  checkUrl(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundBlockedError(`Request blocked: only http and https URLs may be requested, not ${url.protocol}`);
    }
    if (url.username || url.password) {
      throw new OutboundBlockedError('Request blocked: URLs with credentials may not be requested');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const reason = this.blockedReason(host, host);
      if (reason) {
        throw new OutboundBlockedError(`Request to ${url.origin} blocked: ${reason}`);
      }
    }
  }

  /**
   * A DNS lookup for net.connect that only ever yields permitted addresses: every address a name
   * resolves to must be permitted (a name with one internal address among public ones is refused).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const family = typeof options === 'object' && typeof options.family === 'number' ? options.family : 0;
    this.resolveAll(hostname, family).then(
      (list) => {
        for (const entry of list) {
          const reason = this.blockedReason(hostname, entry.address);
          if (reason) {
            callback(new OutboundBlockedError(`Request to ${hostname} blocked: ${reason}`), '', 0);
            return;
          }
        }
        if (list.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        if ((options as { all?: boolean }).all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
        } else {
          callback(null, list[0].address, list[0].family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

export interface OutboundRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  maxRedirects?: number;
  /** Larger responses are cut off with an error (default 10 MB). */
  maxResponseBytes?: number;
}

export interface OutboundResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

/** Headers that carry the caller's credentials: dropped when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization', 'x-signature'];

/** Sends one request, following redirects (each destination checked again). */
export async function outboundRequest(policy: OutboundPolicy, request: OutboundRequest): Promise<OutboundResponse> {
  const tracer = policy.tracer;
  if (!tracer) {
    return requestFollowingRedirects(policy, request);
  }
  const target = new URL(request.url);
  const method = (request.method ?? 'GET').toUpperCase();
  // The host only: a webhook's path or query often is its secret.
  const attributes = {
    'http.request.method': method,
    'server.address': target.hostname,
    'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
  };
  return inSpan(
    tracer,
    method,
    attributes,
    async (span) => {
      const headers = { ...(request.headers ?? {}) };
      propagation.inject(context.active(), headers);
      const response = await requestFollowingRedirects(policy, { ...request, headers });
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 400) {
        span?.setStatus({ code: SpanStatusCode.ERROR });
      }
      return response;
    },
    SpanKind.CLIENT,
  );
}

async function requestFollowingRedirects(policy: OutboundPolicy, request: OutboundRequest): Promise<OutboundResponse> {
  let url = new URL(request.url);
  let method = (request.method ?? 'GET').toUpperCase();
  let body = request.body;
  let headers = { ...(request.headers ?? {}) };
  const maxRedirects = request.maxRedirects ?? 5;
  const deadline = Date.now() + request.timeoutMs;
  for (let hop = 0; ; hop++) {
    policy.checkUrl(url);
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new Error(`Request to ${url.origin} timed out`);
    }
    const response = await sendOnce(
      policy,
      url,
      method,
      headers,
      body,
      remaining,
      request.maxResponseBytes ?? 10 << 20,
    );
    const location = response.headers.location;
    if (![301, 302, 303, 307, 308].includes(response.status) || !location || maxRedirects === 0) {
      return { ...response, url: url.toString() };
    }
    if (hop >= maxRedirects) {
      throw new Error(`Too many redirects from ${request.url}`);
    }
    const next = new URL(location, url);
    if (next.origin !== url.origin) {
      headers = Object.fromEntries(
        Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.includes(k.toLowerCase())),
      );
    }
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(
        Object.entries(headers).filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase())),
      );
    }
    url = next;
  }
}

function sendOnce(
  policy: OutboundPolicy,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  timeoutMs: number,
  maxBytes: number,
): Promise<Omit<OutboundResponse, 'url'>> {
  return new Promise((resolve, reject) => {
    const transport = url.protocol === 'https:' ? https : http;
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
    const req = transport.request(
      url,
      {
        method,
        headers: { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) },
        lookup: policy.lookup,
        agent: url.protocol === 'https:' ? policy.httpsAgent : policy.httpAgent,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new Error(`Response from ${url.origin} is larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) {
              flat[k] = Array.isArray(v) ? v.join(', ') : v;
            }
          }
          resolve({
            status: res.statusCode ?? 0,
            statusText: res.statusMessage ?? '',
            headers: flat,
            body: Buffer.concat(chunks),
          });
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`Request to ${url.origin} timed out`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error(`Request to ${url.origin} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
