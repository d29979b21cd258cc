import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundBlockedError, OutboundPolicy, outboundRequest, type ResolveAll } from './outbound-http.js';

let server: Server;
let port = 0;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url === '/to-loopback') {
      res.writeHead(302, { location: `http://127.0.0.2:${port}/secret` }).end();
    } else if (req.url === '/to-metadata') {
      res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    } else if (req.url === '/to-internal-name') {
      res.writeHead(302, { location: `http://sneaky.test:${port}/secret` }).end();
    } else if (req.url === '/to-self') {
      res.writeHead(303, { location: '/ok' }).end();
    } else {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${body}`));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const strict = new OutboundPolicy([]);

/** DNS as an attacker controlling a name would set it up: public-looking names with internal addresses. */
const NAMES: Record<string, string[]> = {
  'internal.test': ['10.0.0.5'],
  'private172.test': ['172.16.0.9'],
  'private192.test': ['192.168.1.10'],
  'metadata.test': ['169.254.169.254'],
  'linklocal.test': ['169.254.10.10'],
  'loopback.test': ['127.0.0.1'],
  'loopback6.test': ['::1'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'mapped-hex.test': ['::ffff:a9fe:a9fe'],
  'ula.test': ['fd00:ec2::254'],
  'mixed.test': ['93.184.215.14', '192.168.1.10'],
  'sneaky.test': ['127.0.0.2'],
};
const fakeDns: ResolveAll = async (hostname) => {
  const addresses = NAMES[hostname];
  if (!addresses) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  }
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const strictWithDns = new OutboundPolicy([], { resolve: fakeDns });

async function expectBlocked(policy: OutboundPolicy, url: string): Promise<void> {
  const before = hits.length;
  await expect(outboundRequest(policy, { url, timeoutMs: 3000 })).rejects.toBeInstanceOf(OutboundBlockedError);
  expect(hits.length).toBe(before);
}

describe('outbound requests without server-side request forgery', () => {
  it.each([
    ['loopback IPv4', () => `http://127.0.0.1:${port}/`],
    ['loopback elsewhere in 127/8', () => `http://127.0.0.2:${port}/`],
    ['loopback IPv6', () => `http://[::1]:${port}/`],
    ['IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${port}/`],
    ['integer-encoded loopback', () => `http://2130706433:${port}/`],
    ['hex-encoded loopback', () => `http://0x7f.1:${port}/`],
    ['unspecified address', () => `http://0.0.0.0:${port}/`],
    ['private 10/8', () => 'http://10.1.2.3/'],
    ['private 172.16/12', () => 'http://172.20.0.1/'],
    ['private 192.168/16', () => 'http://192.168.1.1/'],
    ['carrier NAT (Alibaba metadata)', () => 'http://100.100.100.200/'],
    ['link-local', () => 'http://169.254.10.10/'],
    ['AWS/GCP/Azure metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['AWS metadata over IPv6', () => 'http://[fd00:ec2::254]/'],
    ['IPv6 link-local', () => 'http://[fe80::1]/'],
    ['IPv6 unique local', () => 'http://[fc00::1]/'],
    ['a DNS name resolving to loopback', () => `http://localhost:${port}/`],
  ])('blocks %s', async (_name, url) => {
    await expectBlocked(strict, url());
  });

  it.each(Object.keys(NAMES))('blocks a DNS name resolving to an internal address: %s', async (name) => {
    await expectBlocked(strictWithDns, `http://${name}:${port}/`);
  });

  it('checks the addresses of a name after DNS, also on redirects, and honours the allow-list there', async () => {
    const allowLoopback = new OutboundPolicy(['127.0.0.1'], { resolve: fakeDns });
    // A name resolving to an allow-listed address is reached (the check is on the address).
    const ok = await outboundRequest(allowLoopback, { url: `http://loopback.test:${port}/named`, timeoutMs: 3000 });
    expect(ok.status).toBe(200);
    // A redirect to a name resolving to another internal address is refused before it is sent.
    const before = hits.length;
    await expect(
      outboundRequest(allowLoopback, { url: `http://127.0.0.1:${port}/to-internal-name`, timeoutMs: 3000 }),
    ).rejects.toBeInstanceOf(OutboundBlockedError);
    expect(hits.slice(before)).toEqual(['GET /to-internal-name']);
    // Allow-listing the name itself lets it through whatever it resolves to.
    const byName = await outboundRequest(new OutboundPolicy(['sneaky.test', '127.0.0.1'], { resolve: fakeDns }), {
      url: `http://127.0.0.1:${port}/to-internal-name`,
      timeoutMs: 3000,
    }).catch((err: Error) => err);
    // 127.0.0.2 is allowed by name but nothing listens there: a connection error, not a block.
    expect(byName).not.toBeInstanceOf(OutboundBlockedError);
  });

  it('blocks schemes other than http and https, and URLs with credentials', async () => {
    await expectBlocked(strict, 'file:///etc/passwd');
    await expectBlocked(new OutboundPolicy(['127.0.0.1']), `http://user:pw@127.0.0.1:${port}/`);
  });

  it('reaches an allow-listed address, and checks every redirect again', async () => {
    const policy = new OutboundPolicy(['127.0.0.1']);
    const ok = await outboundRequest(policy, {
      url: `http://127.0.0.1:${port}/x`,
      method: 'POST',
      body: 'there',
      timeoutMs: 3000,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.toString()).toBe('hello there');

    const followed = await outboundRequest(policy, {
      url: `http://127.0.0.1:${port}/to-self`,
      method: 'POST',
      body: 'x',
      timeoutMs: 3000,
    });
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`http://127.0.0.1:${port}/ok`);

    const before = hits.length;
    await expect(
      outboundRequest(policy, { url: `http://127.0.0.1:${port}/to-loopback`, timeoutMs: 3000 }),
    ).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(
      outboundRequest(policy, { url: `http://127.0.0.1:${port}/to-metadata`, timeoutMs: 3000 }),
    ).rejects.toBeInstanceOf(OutboundBlockedError);
    // Only the allowed first hops arrived; the redirected requests were never sent.
    expect(hits.slice(before)).toEqual(['GET /to-loopback', 'GET /to-metadata']);
  });

  it('allows a host name by name, and by CIDR range', async () => {
    const byName = await outboundRequest(new OutboundPolicy(['localhost']), {
      url: `http://localhost:${port}/`,
      timeoutMs: 3000,
    });
    expect(byName.status).toBe(200);
    const byRange = await outboundRequest(new OutboundPolicy(['127.0.0.0/8', '::1']), {
      url: `http://127.0.0.1:${port}/`,
      timeoutMs: 3000,
    });
    expect(byRange.status).toBe(200);
  });

  it('does not treat public addresses as blocked', () => {
    expect(strict.blockedReason('example.org', '93.184.215.14')).toBeUndefined();
    expect(strict.blockedReason('example.org', '2606:2800:21f:cb07:6820:80da:af6b:8b2c')).toBeUndefined();
    expect(strict.blockedReason('x', '::ffff:10.0.0.1')).toBeDefined();
    expect(strict.blockedReason('x', '64:ff9b::a9fe:a9fe')).toBeDefined();
    expect(strict.blockedReason('x', '168.63.129.16')).toBeDefined();
  });
});
