// Test helpers for subscriptions (used by *.test.ts only): a local HTTP receiver for rest-hooks.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The sender's port: which process sent it (test/process.ts serverOfConnection). */
  remotePort: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** The next `n` requests are answered 500. */
  failNext(n: number): void;
  /** Requests to `path` are recorded on arrival but not answered until `release()` is called. */
  hold(path: string): { release(): void; pending(): number };
  /** Requests to `path` are answered with a redirect (`status`, default 307) to `location`. */
  redirect(path: string, location: string, status?: number): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 that records every request and answers 200 (or 500 when told to fail). */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let failures = 0;
  const held = new Map<string, (() => void)[]>();
  const redirects = new Map<string, { location: string; status: number }>();
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
        remotePort: req.socket.remotePort ?? 0,
      });
      const answer = (): void => {
        const redirect = redirects.get(req.url ?? '');
        if (redirect) {
          res.writeHead(redirect.status, { location: redirect.location }).end();
        } else if (failures > 0) {
          failures--;
          res.writeHead(500).end('not now');
        } else {
          res.writeHead(200).end('ok');
        }
      };
      const waiting = held.get(req.url ?? '');
      if (waiting) {
        waiting.push(answer);
        res.on('close', () => {
          const i = waiting.indexOf(answer);
          if (i >= 0) {
            waiting.splice(i, 1);
          }
        });
      } else {
        answer();
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
    redirect(path, location, status = 307) {
      redirects.set(path, { location, status });
    },
    hold(path) {
      const waiting: (() => void)[] = [];
      held.set(path, waiting);
      return {
        pending: () => waiting.length,
        release() {
          held.delete(path);
          for (const answer of waiting.splice(0)) {
            answer();
          }
        },
      };
    },
    close: () =>
      new Promise((resolve) => {
        for (const waiting of held.values()) {
          waiting.splice(0).forEach((answer) => answer());
        }
        held.clear();
        server.close(() => resolve());
      }),
  };
}
