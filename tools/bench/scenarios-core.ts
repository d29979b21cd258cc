import { makePatient, makePatientTransaction, prng } from './data.js';
import { analyze, type BenchContext, type Scenario } from './scenario.js';

/** Issue 2's workloads: create, read, update, history and a 150-entry transaction. */
export async function coreScenarios(ctx: BenchContext): Promise<Scenario[]> {
  const { client } = ctx;
  const rand = prng(42);
  ctx.log('seeding 500 patients with 5 versions each for read, update and history...');
  const ids: string[] = [];
  for (let i = 0; i < 500; i++) {
    const text = await client.expect(201, 'POST', '/Patient', makePatient(rand, i));
    ids.push((JSON.parse(text) as { id: string }).id);
  }
  await Promise.all(
    ids.map(async (id, i) => {
      for (let v = 0; v < 4; v++) {
        await client.expect(200, 'PUT', `/Patient/${id}`, { ...makePatient(rand, i), id, active: v % 2 === 0 });
      }
    }),
  );
  await analyze(ctx);
  let counter = 1_000_000;
  const updateBodies = ids.map((id, i) => ({ ...makePatient(prng(i), i), id }));
  // Every update changes the resource (Patient.active flips), as a real edit of one field does:
  // an update that changes nothing would measure less than a write.
  const active = ids.map(() => true);
  return [
    {
      name: 'create Patient',
      unit: 'req/s',
      target: '>= 1000',
      op: async () => {
        await client.expect(201, 'POST', '/Patient', makePatient(rand, counter++), { prefer: 'return=minimal' });
      },
    },
    {
      name: 'read Patient',
      unit: 'req/s',
      target: '>= 5000',
      op: async (_w, i) => {
        await client.expect(200, 'GET', `/Patient/${ids[i % ids.length]}`);
      },
    },
    {
      name: 'update Patient',
      unit: 'req/s',
      target: '>= 900',
      op: async (w, i) => {
        // Each worker updates its own slice so updates measure writes, not lock waits.
        const slot = (w + ctx.concurrency * i) % ids.length;
        active[slot] = !active[slot];
        const body = { ...updateBodies[slot], active: active[slot] };
        await client.expect(200, 'PUT', `/Patient/${ids[slot]}`, body, { prefer: 'return=minimal' });
      },
    },
    {
      name: 'Patient history',
      unit: 'req/s',
      target: '>= 2000',
      op: async (_w, i) => {
        await client.expect(200, 'GET', `/Patient/${ids[i % ids.length]}/_history`);
      },
    },
    {
      name: 'transaction, 150 entries',
      unit: 'resources/s',
      target: '>= 1000',
      op: async () => {
        const bundle = makePatientTransaction(rand, counter++, 150);
        await client.expect(200, 'POST', '/', bundle, { prefer: 'return=minimal' });
        return 150;
      },
    },
  ];
}
