import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchContext, Scenario } from './scenario.js';
import { median, runLoad, type LoadResult } from './load.js';

/**
 * Issue 7's workloads. Bots: $execute of a trivial bot at concurrency 8 (target >= 200 runs/s).
 * Subscriptions: create throughput without and with 100 active rest-hook subscriptions (target:
 * less than 20% slower), and notification latency (write to rest-hook arrival) at 100 writes/s
 * (target p95 < 500 ms). The rest-hooks call a receiver in this process on 127.0.0.1, so the server
 * must allow-list it (HEARTH_OUTBOUND_ALLOW_LIST=127.0.0.1; the bench's own server does).
 *
 * The fan-out figures are paired: each run measures creates with the 100 subscriptions switched
 * off and then on again, back to back, so the ratio compares like with like on a machine whose
 * load drifts (a shared machine's noise swamps a comparison of runs minutes apart).
 */
export async function automationScenarios(ctx: BenchContext): Promise<Scenario[]> {
  const { client } = ctx;
  const bot = await createTrivialBot(ctx);
  const receiver = await startReceiver();
  let counter = 0;

  const observation = (code: string): object => ({
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'https://hearth.dev/bench', code }] },
    valueQuantity: { value: counter++, unit: 'mg' },
  });
  const createObservation = async (code: string): Promise<string> => {
    const text = await client.expect(201, 'POST', '/Observation', observation(code));
    return (JSON.parse(text) as { id: string }).id;
  };

  const subscriptions: { id: string; status: string; meta?: unknown }[] = [];
  /** Switches every benchmark subscription on or off in one transaction. */
  const setSubscriptions = async (status: 'active' | 'off'): Promise<void> => {
    await client.expect(200, 'POST', '', {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: subscriptions.map((sub) => {
        sub.status = status;
        const { meta: _meta, ...resource } = sub;
        return { resource, request: { method: 'PUT', url: `Subscription/${sub.id}` } };
      }),
    });
    // Let the server's subscription cache hear of it.
    await new Promise((r) => setTimeout(r, 500));
  };
  const create = (code: string) => async (): Promise<void> => {
    await client.expect(201, 'POST', '/Observation', observation(code), { prefer: 'return=minimal' });
  };

  /** Creates with the 100 subscriptions off, then on, in each run; reports the run with them on. */
  const pairedFanOut = (label: string, code: string, setup?: () => Promise<void>): Scenario => {
    const ratios: number[] = [];
    const name = `create Observation, 100 subscriptions (${label})`;
    return {
      name,
      unit: 'req/s',
      target: '>= 80% of none active (paired)',
      setup,
      measure: async (seconds) => {
        const load = { concurrency: ctx.concurrency, seconds, warmupSeconds: 0.5 };
        await setSubscriptions('off');
        const c0 = await ctx.cpuMs?.();
        const without = await runLoad(`${name}, all off`, create(code), load);
        const c1 = await ctx.cpuMs?.();
        await setSubscriptions('active');
        const c2 = await ctx.cpuMs?.();
        const withSubs = await runLoad(name, create(code), load);
        // Deliveries still queued would slow the next run's "off" half: wait until they are done.
        await receiver.quiet(1000, 60_000);
        const c3 = await ctx.cpuMs?.();
        ratios.push(withSubs.rate / without.rate);
        // CPU per create of each half; the "on" half includes the evaluations and deliveries it caused.
        const perOp = (a: number | undefined, b: number | undefined, n: number): string =>
          a !== undefined && b !== undefined && n > 0 ? ((b - a) / n).toFixed(2) : '-';
        ctx.log(
          `    paired: ${without.rate.toFixed(0)} req/s with all off, ${withSubs.rate.toFixed(0)} with 100 on: ${((withSubs.rate / without.rate) * 100).toFixed(1)}%;` +
            ` cpu ms/op off: server ${perOp(c0?.server, c1?.server, without.count)}, db ${perOp(c0?.db, c1?.db, without.count)};` +
            ` on: server ${perOp(c2?.server, c3?.server, withSubs.count)}, db ${perOp(c2?.db, c3?.db, withSubs.count)}`,
        );
        return withSubs;
      },
      op: async () => undefined,
      after: () => {
        ctx.log(
          `  fan-out (${label}): ${(median(ratios) * 100).toFixed(1)}% of the rate with none on (median of paired runs)`,
        );
      },
    };
  };

  return [
    {
      name: 'bot $execute (trivial bot)',
      unit: 'req/s',
      target: '>= 200 at concurrency 8',
      concurrency: 8,
      op: async () => {
        await client.expect(
          200,
          'POST',
          `/Bot/${bot}/$execute`,
          { hello: 'world' },
          { 'content-type': 'application/json' },
        );
      },
    },
    {
      name: 'create Observation, no subscriptions',
      unit: 'req/s',
      op: create('bench-none'),
    },
    pairedFanOut('none match', 'bench-none', async () => {
      ctx.log('creating 100 rest-hook subscriptions on Observation?code=...');
      for (let i = 0; i < 100; i++) {
        const code = i === 0 ? 'bench-match' : `bench-sub-${i}`;
        const text = await client.expect(201, 'POST', '/Subscription', {
          resourceType: 'Subscription',
          status: 'active',
          reason: 'benchmark',
          criteria: `Observation?code=https://hearth.dev/bench|${code}`,
          channel: { type: 'rest-hook', endpoint: `${receiver.url}hook`, payload: 'application/fhir+json' },
        });
        subscriptions.push(JSON.parse(text) as { id: string; status: string; meta?: unknown });
      }
    }),
    pairedFanOut('1 matches: a rest-hook per write', 'bench-match'),
    {
      name: 'notification latency at 100 writes/s (write to rest-hook arrival)',
      unit: 'notifications/s',
      target: 'p95 < 500 ms',
      measure: async (seconds) => {
        // Let deliveries queued by the previous workload drain first.
        await receiver.quiet(2000, 30_000);
        return pacedLatency(seconds, 100, createObservation, receiver);
      },
      op: async () => undefined,
    },
  ];
}

/** Writes at a fixed rate and measures, for each write, the time until its rest-hook arrives. */
async function pacedLatency(
  seconds: number,
  perSecond: number,
  write: (code: string) => Promise<string>,
  receiver: Receiver,
): Promise<LoadResult> {
  const sentAt = new Map<string, number>();
  const writes: Promise<void>[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const total = Math.round(seconds * perSecond);
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) {
      await new Promise((r) => setTimeout(r, wait));
    }
    const started = Date.now();
    writes.push(
      write('bench-match')
        .then((id) => {
          sentAt.set(id, started);
        })
        .catch((err: unknown) => {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }),
    );
  }
  await Promise.all(writes);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && [...sentAt.keys()].some((id) => !receiver.arrivals.has(id))) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const latencies: number[] = [];
  let missing = 0;
  for (const [id, at] of sentAt) {
    const arrived = receiver.arrivals.get(id);
    if (arrived === undefined) {
      missing++;
    } else {
      latencies.push(arrived - at);
    }
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number): number =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] : NaN;
  const elapsed = (performance.now() - t0) / 1000;
  return {
    name: 'notification latency',
    count: latencies.length,
    errors: errors + missing,
    seconds: elapsed,
    rate: latencies.length / elapsed,
    p50: pct(50),
    p95: pct(95),
    p99: pct(99),
    firstError: firstError ?? (missing ? `${missing} notifications did not arrive within 10 s` : undefined),
  };
}

/** Creates a Bot with its membership (as POST /admin/projects/{id}/bot does) and deploys a trivial handler. */
async function createTrivialBot(ctx: BenchContext): Promise<string> {
  const { client } = ctx;
  const bot = JSON.parse(
    await client.expect(201, 'POST', '/Bot', { resourceType: 'Bot', name: 'bench trivial bot' }),
  ) as { id: string; meta: { project: string } };
  await client.expect(201, 'POST', '/ProjectMembership', {
    resourceType: 'ProjectMembership',
    project: { reference: `Project/${bot.meta.project}` },
    user: { reference: `Bot/${bot.id}` },
    profile: { reference: `Bot/${bot.id}` },
  });
  await client.expect(
    200,
    'POST',
    `/Bot/${bot.id}/$deploy`,
    {
      code: 'export async function handler(client, event) { return { ok: true, echo: event.input }; }',
      filename: 'trivial.js',
    },
    { 'content-type': 'application/json' },
  );
  return bot.id;
}

interface Receiver {
  url: string;
  /** Arrival time (ms since epoch) of the first rest-hook for each resource id. */
  arrivals: Map<string, number>;
  /** Resolves once no request arrived for `ms` (or after `max` ms). */
  quiet(ms: number, max: number): Promise<void>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  let last = Date.now();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      last = now;
      try {
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string }).id;
        if (id && !arrivals.has(id)) {
          arrivals.set(id, now);
        }
      } catch {
        // Not JSON: ignored.
      }
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    arrivals,
    async quiet(ms, max) {
      const deadline = Date.now() + max;
      while (Date.now() - last < ms && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
