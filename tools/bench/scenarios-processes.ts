import { signIn } from './auth.js';
import { makePatient, prng } from './data.js';
import { BenchClient } from './http.js';
import { runLoad } from './load.js';
import { analyze, type BenchContext, type Scenario } from './scenario.js';
import { startServer, type BenchServer } from './server.js';

/** Workers send to process (worker mod processes): the concurrency is split evenly between them. */
type Workload = (clients: BenchClient[]) => Scenario['op'];

/**
 * Issue 12's scale-out: the same workloads against one server process, then split between two
 * processes on the same machine and database (`--only processes`). Each 2-process figure is
 * followed by its ratio to the 1-process figure; CPU per operation counts both processes.
 */
export async function processesScenarios(
  ctx: BenchContext,
  first: BenchServer | undefined,
  admin: { email: string; password: string },
): Promise<Scenario[]> {
  if (!first) {
    ctx.log('processes: needs a server the benchmark starts itself (not --base-url); skipped');
    return [];
  }
  ctx.log('processes: starting a second server process on the same database...');
  const second = await startServer(admin, { databaseUrl: first.databaseUrl, label: 'second' });
  const secondClient = new BenchClient(`${second.baseUrl}fhir/R4`, ctx.concurrency);
  ctx.onFinish(async () => {
    await secondClient.close();
    await second.stop();
  });
  secondClient.headers = await signIn(second.baseUrl, admin.email, admin.password);

  // Seeded through both processes, so that both have run writes before anything is measured.
  ctx.log('processes: seeding 500 patients...');
  const rand = prng(12);
  const clients = [ctx.client, secondClient];
  const ids: string[] = [];
  for (let i = 0; i < 500; i++) {
    const text = await clients[i % 2].expect(201, 'POST', '/Patient', makePatient(rand, i));
    ids.push((JSON.parse(text) as { id: string }).id);
  }
  await analyze(ctx);

  let counter = 2_000_000;
  const workloads: { name: string; unit: Scenario['unit']; op: Workload }[] = [
    {
      name: 'create Patient',
      unit: 'req/s',
      op: (clients) => async (w) => {
        await clients[w % clients.length].expect(201, 'POST', '/Patient', makePatient(rand, counter++), {
          prefer: 'return=minimal',
        });
      },
    },
    {
      name: 'read Patient',
      unit: 'req/s',
      op: (clients) => async (w, i) => {
        await clients[w % clients.length].expect(200, 'GET', `/Patient/${ids[(w * 31 + i) % ids.length]}`);
      },
    },
    {
      name: 'search Patient?name',
      unit: 'req/s',
      op: (clients) => async (w, i) => {
        const family = ['Smith', 'Garcia', 'Lee', 'Clark', 'Moore'][(w + i) % 5];
        await clients[w % clients.length].expect(200, 'GET', `/Patient?name=${family}&_count=10`);
      },
    },
  ];
  const cpuOf = (servers: BenchServer[]) => () => {
    const times = servers.map((s) => s.cpuMs());
    return times.every((t) => t !== undefined) ? times.reduce((a, b) => a + b, 0) : undefined;
  };
  return workloads.flatMap((workload): Scenario[] => {
    let single = NaN;
    return [
      {
        name: `${workload.name}, 1 process`,
        unit: workload.unit,
        op: workload.op([ctx.client]),
        serverCpuMs: cpuOf([first]),
        after: (result) => {
          single = result.rate;
        },
      },
      {
        name: `${workload.name}, 2 processes`,
        unit: workload.unit,
        // The first process has just run the workload on its own; the second gets a second of it
        // before the benchmark's own warm-up of the split load (its JIT and caches are cold).
        setup: async () => {
          await runLoad(workload.name, workload.op([secondClient]), {
            concurrency: ctx.concurrency,
            seconds: 1,
            warmupSeconds: 0,
          });
        },
        op: workload.op([ctx.client, secondClient]),
        serverCpuMs: cpuOf([first, second]),
        after: (result) => {
          if (Number.isFinite(single)) {
            ctx.log(`  ${workload.name}: 2 processes / 1 process = ${(result.rate / single).toFixed(2)}x`);
          }
        },
      },
    ];
  });
}
