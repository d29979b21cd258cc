// Test helpers for subscriptions (used by *.test.ts only): a local HTTP receiver for rest-hooks.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** The next `n` requests are answered 500. */
  failNext(n: number): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 that records every request and answers 200 (or 500 when told to fail). */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let failures = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      if (failures > 0) {
        failures--;
        res.writeHead(500).end('not now');
      } else {
        res.writeHead(200).end('ok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    requests,
    failNext(n) {
      failures = n;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
