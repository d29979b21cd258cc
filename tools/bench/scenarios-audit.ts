/**
 * Issue 23: what the access audit trail costs. Each workload is measured with the project's
 * trail off, then in full (Project.setting auditMode), back to back on the same data; the ratio
 * full / off of each is printed (target >= 0.90).
 */
import { makePatient, makePatientTransaction, prng } from './data.js';
import { analyze, type BenchContext, type Scenario } from './scenario.js';
import type { LoadResult } from './load.js';

interface Project {
  resourceType: 'Project';
  id: string;
  setting?: { name: string; valueString?: string }[];
}

export async function auditScenarios(ctx: BenchContext): Promise<Scenario[]> {
  const { client } = ctx;
  const rand = prng(23);
  ctx.log('seeding 500 patients for the audit workloads...');
  const ids: string[] = [];
  let projectId = '';
  for (let i = 0; i < 500; i++) {
    const created = JSON.parse(await client.expect(201, 'POST', '/Patient', makePatient(rand, i))) as {
      id: string;
      meta: { project: string };
    };
    ids.push(created.id);
    projectId = created.meta.project;
  }
  await analyze(ctx);
  const setMode = async (mode: 'off' | 'full') => {
    const project = JSON.parse(await client.expect(200, 'GET', `/Project/${projectId}`)) as Project;
    const setting = [
      ...(project.setting ?? []).filter((s) => s.name !== 'auditMode'),
      { name: 'auditMode', valueString: mode },
    ];
    await client.expect(200, 'PUT', `/Project/${projectId}`, { ...project, setting });
  };
  let counter = 2_000_000;
  const active = ids.map(() => true);
  const workloads: (Omit<Scenario, 'name'> & { label: string })[] = [
    {
      label: 'create Patient',
      unit: 'req/s',
      op: async () => {
        await client.expect(201, 'POST', '/Patient', makePatient(rand, counter++), { prefer: 'return=minimal' });
      },
    },
    {
      label: 'read Patient',
      unit: 'req/s',
      op: async (_w, i) => {
        await client.expect(200, 'GET', `/Patient/${ids[i % ids.length]}`);
      },
    },
    {
      label: 'search Patient?_id (page of 1)',
      unit: 'req/s',
      op: async (_w, i) => {
        await client.expect(200, 'GET', `/Patient?_id=${ids[i % ids.length]}`);
      },
    },
    {
      label: 'update Patient',
      unit: 'req/s',
      op: async (w, i) => {
        const slot = (w + ctx.concurrency * i) % ids.length;
        active[slot] = !active[slot];
        const body = { ...makePatient(prng(slot), slot), id: ids[slot], active: active[slot] };
        await client.expect(200, 'PUT', `/Patient/${ids[slot]}`, body, { prefer: 'return=minimal' });
      },
    },
    {
      label: 'Patient history',
      unit: 'req/s',
      op: async (_w, i) => {
        await client.expect(200, 'GET', `/Patient/${ids[i % ids.length]}/_history`);
      },
    },
    {
      label: 'transaction, 50 entries',
      unit: 'resources/s',
      op: async () => {
        await client.expect(200, 'POST', '/', makePatientTransaction(rand, counter++, 50), {
          prefer: 'return=minimal',
        });
        return 50;
      },
    },
  ];
  const scenarios: Scenario[] = [];
  // CPU per operation (server + database, read from /proc) moves less with the machine's other load than the rate.
  const cpuOf = (result: LoadResult) => {
    const r = result as LoadResult & { cpuMsPerOp?: number; dbCpuMsPerOp?: number };
    return (r.cpuMsPerOp ?? NaN) + (r.dbCpuMsPerOp ?? NaN);
  };
  for (const { label, ...workload } of workloads) {
    let offRate = NaN;
    let offCpu = NaN;
    scenarios.push({
      ...workload,
      name: `${label} [audit off]`,
      setup: () => setMode('off'),
      after: (result) => {
        offRate = result.rate;
        offCpu = cpuOf(result);
      },
    });
    scenarios.push({
      ...workload,
      name: `${label} [audit full]`,
      target: '>= 0.90 of off',
      setup: () => setMode('full'),
      after: (result) => {
        ctx.log(
          `audit full / off, ${label}: rate ${(result.rate / offRate).toFixed(3)} (target >= 0.90); CPU per op (server + db) ${(cpuOf(result) / offCpu).toFixed(3)}`,
        );
      },
    });
  }
  return scenarios;
}
