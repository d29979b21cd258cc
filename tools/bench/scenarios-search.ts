import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDENTIFIER_SYSTEM, makePatientTransaction, OBSERVATION_CODES, prng } from './data.js';
import { runLoad, type LoadResult } from './load.js';
import { analyze, type BenchContext, type Scenario } from './scenario.js';

const GRAPHQL_LIST_WITH_SUBJECTS = `query($code: [token]) {
  ObservationList(code: $code, date: "ge2020", _sort: "-date", _count: 20) {
    id effectiveDateTime valueQuantity { value unit }
    subject { reference resource { ... on Patient { id birthDate name { family given } } } }
  }
}`;

/**
 * The p50 of each workload per scale, kept between runs (HEARTH_BENCH_P50_FILE, else in the
 * temporary directory), so that `--scale 10` after a `--scale 1` run (or the other way round)
 * prints how much each query's p50 grew: issue 3 allows at most 1.5x for the selective ones.
 */
const P50_FILE = process.env.HEARTH_BENCH_P50_FILE || join(tmpdir(), 'hearth-bench-search-p50.json');

type P50s = Record<string, Record<string, number>>;

function readP50s(): P50s {
  try {
    return existsSync(P50_FILE) ? (JSON.parse(readFileSync(P50_FILE, 'utf8')) as P50s) : {};
  } catch {
    return {};
  }
}

/** Records a workload's p50 at this scale and logs its ratio to the other scale's, when known. */
function compareScales(ctx: BenchContext, name: string, selective: boolean, result: LoadResult): void {
  const all = readP50s();
  const scale = String(ctx.scale);
  (all[scale] ??= {})[name] = result.p50;
  writeFileSync(P50_FILE, JSON.stringify(all, null, 2));
  // Against scale 1, or at scale 1 against a larger scale measured before.
  const big = scale === '1' ? Object.keys(all).find((k) => k !== '1' && all[k][name] !== undefined) : scale;
  const base = all['1']?.[name];
  const grown = big ? all[big]?.[name] : undefined;
  if (!big || base === undefined || grown === undefined || big === '1') return;
  ctx.log(
    `  p50 at scale ${big} / scale 1: ${(grown / base).toFixed(2)}x (${grown.toFixed(1)} / ${base.toFixed(1)} ms)` +
      (selective ? ', target <= 1.5x' : ', not a selective query'),
  );
}

interface TransactionResponse {
  entry?: { response?: { location?: string } }[];
}

/** The seeded data set the search workloads read. */
export interface SearchData {
  patients: number;
  /** Ids of the seeded Patients, in seeding order. */
  patientIds: string[];
}

/**
 * Seeds 2,000 × scale patients, each with 25 observations, 3 encounters and 2 conditions, through
 * transaction Bundles (the load rate is printed). Planner statistics are left as they are.
 */
export async function seedSearchData(ctx: BenchContext): Promise<SearchData> {
  const { client } = ctx;
  const patients = 2000 * ctx.scale;
  const patientIds: string[] = new Array(patients);
  ctx.log(`seeding ${patients} patients (31 resources each) through transactions...`);
  const load = await runLoad(
    'seed',
    async (_w, i) => {
      const bundle = makePatientTransaction(prng(1000 + i), i, 31, 25);
      const text = await client.expect(200, 'POST', '/', bundle, { prefer: 'return=minimal' });
      const location = (JSON.parse(text) as TransactionResponse).entry?.[0]?.response?.location ?? '';
      patientIds[i] = location.split('/')[1];
      return 31;
    },
    { concurrency: ctx.concurrency, seconds: 36_000, warmupSeconds: 0, maxOps: patients },
  );
  ctx.log(
    `seeded ${load.count * 31} resources in ${load.seconds.toFixed(1)} s: ${load.rate.toFixed(0)} resources/s (errors ${load.errors}${load.firstError ? `: ${load.firstError}` : ''})`,
  );
  return { patients, patientIds: patientIds.filter(Boolean) };
}

/** Issue 3's workloads on the seeded data (the page 50 one only when next links reach it). */
export async function searchWorkloads(ctx: BenchContext, data: SearchData): Promise<Scenario[]> {
  const { client } = ctx;
  const { patients } = data;
  const ids = data.patientIds;
  const families = [
    'Smi',
    'Joh',
    'Wil',
    'Bro',
    'Jon',
    'Gar',
    'Mil',
    'Dav',
    'Rod',
    'Mar',
    'Lop',
    'Gon',
    'And',
    'Tho',
    'Tay',
  ];
  const code = (i: number) => `http://loinc.org|${OBSERVATION_CODES[i % OBSERVATION_CODES.length].code}`;

  // Page 50 of a broad query, reached by following next links once; the benchmark then re-reads it.
  let page50: string | undefined = `/Observation?code=${encodeURIComponent(code(0))}&_count=20`;
  for (let p = 1; p < 50 && page50; p++) {
    const bundle = JSON.parse(await client.expect(200, 'GET', page50)) as {
      link?: { relation: string; url: string }[];
    };
    const next = bundle.link?.find((l) => l.relation === 'next')?.url;
    page50 = next ? next.slice(next.indexOf('/fhir/R4') + '/fhir/R4'.length) : undefined;
  }
  const get = (path: (i: number) => string) => async (_w: number, i: number) => {
    await client.expect(200, 'GET', path(i));
  };
  const scenarios: Scenario[] = [
    {
      name: 'search Patient?name=<prefix>',
      unit: 'req/s',
      target: '>= 1000, p95 <= 25 ms',
      op: get((i) => `/Patient?name=${families[i % families.length]}`),
    },
    {
      name: 'search Patient?identifier=sys|val',
      unit: 'req/s',
      target: '>= 1000, p95 <= 25 ms',
      op: get((i) => `/Patient?identifier=${encodeURIComponent(`${IDENTIFIER_SYSTEM}|MRN-${i % patients}`)}`),
    },
    {
      name: 'search Observation?subject&code',
      unit: 'req/s',
      target: '>= 1000, p95 <= 25 ms',
      op: get((i) => `/Observation?subject=Patient/${ids[i % ids.length]}&code=${encodeURIComponent(code(i))}`),
    },
    {
      name: 'search Observation?code&date&_sort=-date',
      unit: 'req/s',
      target: '>= 1000, p95 <= 25 ms',
      op: get((i) => `/Observation?code=${encodeURIComponent(code(i))}&date=ge2020&_sort=-date&_count=20`),
    },
    {
      name: '... with _include=Observation:subject',
      unit: 'req/s',
      target: 'within 2x of simple',
      op: get(
        (i) =>
          `/Observation?code=${encodeURIComponent(code(i))}&date=ge2020&_sort=-date&_count=20&_include=Observation:subject`,
      ),
    },
    {
      name: 'search Patient?_has:Observation:subject:code',
      unit: 'req/s',
      target: 'within 2x of simple',
      op: get((i) => `/Patient?_has:Observation:subject:code=${encodeURIComponent(code(i))}`),
    },
    {
      name: 'search Observation?subject.name= (chain)',
      unit: 'req/s',
      target: 'within 2x of simple',
      op: get((i) => `/Observation?subject.name=${families[i % families.length]}`),
    },
    {
      // The same page as the _include workload, as FHIR GraphQL (hl7.org/fhir/R4/graphql.html):
      // the subjects are resolved in one batched read per page, not one per observation.
      name: 'GraphQL ObservationList(_count: 20) with subjects',
      unit: 'req/s',
      target: 'within 2x of _include',
      op: async (_w, i) => {
        const text = await client.expect(200, 'POST', '/$graphql', {
          query: GRAPHQL_LIST_WITH_SUBJECTS,
          variables: { code: code(i) },
        });
        if (text.startsWith('{"errors"') || text.includes('"errors":[')) {
          throw new Error(`$graphql errors: ${text.slice(0, 300)}`);
        }
      },
    },
  ];
  if (page50) {
    const url = page50;
    scenarios.push({ name: 'search page 50 (next link)', unit: 'req/s', target: 'as page 1', op: get(() => url) });
  } else {
    ctx.log('could not reach page 50 by next links; that workload is skipped');
  }
  return scenarios;
}

/**
 * Issue 3's workloads on a seeded data set: 2,000 × scale patients, each with 25 observations,
 * 3 encounters and 2 conditions, loaded through transaction Bundles, then ANALYZEd.
 */
export async function searchScenarios(ctx: BenchContext): Promise<Scenario[]> {
  const data = await seedSearchData(ctx);
  await analyze(ctx);
  const scenarios = await searchWorkloads(ctx, data);
  // Selective: the work for a page does not grow with the data. A name prefix (and the chain
  // on it) matches a share of all patients, so its matches grow tenfold at scale 10.
  const growing = /name/;
  for (const s of scenarios) {
    s.after = (result) => compareScales(ctx, s.name, !growing.test(s.name), result);
  }
  return scenarios;
}
