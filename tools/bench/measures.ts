/**
 * `npm run bench -- --only measures [--copies N] [--runs N] [--keep-data]`: a summary
 * `Measure/$evaluate-measure` (CMS122, the published eCQM of ../shared/data/ecqm-r4, run as CQL by
 * cql-execution) over every patient of a server loaded with the Synthea bundles of ../shared/data/synthea-r4.
 *
 * Starts the built server on its own embedded PostgreSQL, loads the two provider batches, then each
 * of the 100 patient transactions `--copies` times (default 10: 1,000 patients). Each load is a new
 * patient: the bundles' entries are POSTs with urn:uuid fullUrls, so the server gives every copy new
 * ids (all copies keep the Synthea identifier, which is how the bench counts the copies already
 * there). CMS122 finds no initial population among these Synthea patients (of its encounter value
 * sets they only have 28 post-operative follow-ups, and 7 diabetics), so the measure's own 4 test
 * patients are loaded `--copies` times too (ids suffixed `-c0`, `-c1`…): 3 initial population, 2
 * denominator, 1 exclusion, 2 numerator each. `--keep-data` keeps the database in
 * HEARTH_BENCH_DATA_DIR between runs and loads only the copies it lacks (loading 1,000 Synthea
 * patients takes most of an hour on a busy 2-core machine).
 *
 * Then `--runs` summary evaluations over 2019 (the test patients' measurement year): the wall time
 * of each, patients per second, the server's CPU time, and its peak resident memory (VmHWM) during
 * the evaluations, read from /proc after its peak was reset (clear_refs) once the load was done,
 * beside its memory before. Last, the same summary over a Group of one copy of each patient: with
 * `--copies N`, every population count of the whole must be N times that one's.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { repairedEcqmBundle } from '../../apps/server/src/test/ecqm-data.js';
import { signIn } from './auth.js';
import { median } from './load.js';
import { processCpuMs, startServer } from './server.js';

const SYNTHEA = resolve(process.env.HEARTH_BENCH_SYNTHEA || '../shared/data/synthea-r4');
const ECQM = resolve(process.env.HEARTH_BENCH_ECQM || '../shared/data/ecqm-r4');
const MEASURE = 'DiabetesHemoglobinA1cHbA1cPoorControl9FHIR';
const PERIOD = 'periodStart=2019-01-01&periodEnd=2019-12-31';
const SYNTHEA_ID = 'https://github.com/synthetichealth/synthea';
/** Transactions posted at once while loading. */
const LOAD_CONCURRENCY = 2;

interface Report {
  group: {
    population: { code: { coding: { code: string }[] }; count: number }[];
    measureScore?: { value: number };
  }[];
  contained?: { resourceType: string }[];
}

/** A test patient's transaction (PUT Type/id) as copy `k`: every id, and every reference to one, suffixed. */
function testCopy(
  bundle: { entry: { resource: { resourceType: string; id: string }; request: { url: string } }[] },
  k: number,
): string {
  const ids = bundle.entry.map((e) => `${e.resource.resourceType}/${e.resource.id}`);
  let text = JSON.stringify({
    ...bundle,
    entry: bundle.entry.map((e) => ({
      ...e,
      resource: { ...e.resource, id: `${e.resource.id}-c${k}` },
      request: { ...e.request, url: `${e.resource.resourceType}/${e.resource.id}-c${k}` },
    })),
  });
  for (const ref of ids) text = text.replaceAll(`"${ref}"`, `"${ref}-c${k}"`);
  return text;
}

function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function counts(report: Report | undefined): Map<string, number> {
  return new Map((report?.group[0].population ?? []).map((p) => [p.code.coding[0].code, p.count]));
}

function describe(report: Report | undefined): string {
  const failures = report?.contained?.find((c) => c.resourceType === 'OperationOutcome') as
    { issue: { details?: { text?: string } }[] } | undefined;
  // Why patients failed, each distinct reason once (patient ids left out).
  const reasons = [
    ...new Set(
      (failures?.issue ?? []).map((i) => (i.details?.text ?? '').replace(/Patient\/[A-Za-z0-9\-.]+/g, 'Patient/…')),
    ),
  ];
  return (
    [...counts(report)].map(([code, n]) => `${code} ${n}`).join(', ') +
    `; score ${report?.group[0].measureScore?.value ?? 'none'}` +
    (failures ? `; ${failures.issue.length} patients failed (${reasons.slice(0, 3).join(' | ')})` : '')
  );
}

export async function runMeasuresBench(
  admin: { email: string; password: string },
  options: { runs: number; copies: number; keepData: boolean },
  log: (line: string) => void,
): Promise<void> {
  if (!existsSync(`${SYNTHEA}/patients`) || !existsSync(`${ECQM}/${MEASURE}`)) {
    log(`no ${SYNTHEA}/patients or ${ECQM}/${MEASURE}: the measures benchmark needs the shared data`);
    return;
  }
  if (options.keepData && !process.env.HEARTH_BENCH_DATA_DIR) {
    throw new Error('--keep-data keeps the database in HEARTH_BENCH_DATA_DIR: set it');
  }
  log('starting server (embedded PostgreSQL unless DATABASE_URL is set)...');
  const server = await startServer(admin, { keepData: options.keepData });
  try {
    const base = `${server.baseUrl}fhir/R4`;
    const headers = {
      ...(await signIn(server.baseUrl, admin.email, admin.password)),
      'content-type': 'application/fhir+json',
    };
    const request = async <T>(method: string, path: string, body?: string): Promise<T> => {
      const res = await fetch(`${base}${path}`, { method, headers, body });
      if (!res.ok) {
        throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 500)}\n${server.output()}`);
      }
      return (await res.json()) as T;
    };
    await request('POST', '', readFileSync(`${ECQM}/${MEASURE}/measure-bundle.json`, 'utf8'));
    for (const f of readdirSync(SYNTHEA)
      .filter((f) => /Information.*\.json\.gz$/.test(f))
      .sort()
      .reverse()) {
      await request('POST', '', gunzipSync(readFileSync(`${SYNTHEA}/${f}`)).toString('utf8'));
    }

    // The copies of each Synthea patient already there (with --keep-data), by its identifier.
    const files = readdirSync(`${SYNTHEA}/patients`).sort();
    const copiesOf = async (file: string): Promise<string[]> => {
      const q = `identifier=${encodeURIComponent(`${SYNTHEA_ID}|${file.replace(/\.json\.gz$/, '')}`)}`;
      const bundle = await request<{ entry?: { resource: { id: string } }[] }>(
        'GET',
        `/Patient?${q}&_elements=id&_count=1000`,
      );
      return (bundle.entry ?? []).map((e) => e.resource.id).sort();
    };
    const jobs: string[] = [];
    for (const file of files) {
      const have = (await copiesOf(file)).length;
      for (let i = have; i < options.copies; i++) jobs.push(file);
    }
    const loadStart = performance.now();
    let done = 0;
    const toLoad = jobs.length;
    const worker = async (): Promise<void> => {
      for (let file = jobs.shift(); file; file = jobs.shift()) {
        await request('POST', '', gunzipSync(readFileSync(`${SYNTHEA}/patients/${file}`)).toString('utf8'));
        if (++done % 100 === 0)
          log(`loaded ${done} of ${toLoad} patient bundles (${((performance.now() - loadStart) / 1000).toFixed(0)} s)`);
      }
    };
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
    // The measure's test patients, each copy under its own ids (PUT: loading one again changes nothing).
    const tests = readdirSync(`${ECQM}/${MEASURE}/tests`).filter(
      (f) => f.endsWith('.json') && !f.endsWith('.expected.json'),
    );
    const testPatients: string[] = [];
    for (const f of tests) {
      const bundle = repairedEcqmBundle(
        JSON.parse(readFileSync(`${ECQM}/${MEASURE}/tests/${f}`, 'utf8')) as Parameters<typeof testCopy>[0],
      );
      const patient = bundle.entry.find((e) => e.resource.resourceType === 'Patient')?.resource.id;
      testPatients.push(`${patient}-c0`);
      for (let k = 0; k < options.copies; k++) await request('POST', '', testCopy(bundle, k));
    }
    const patients = (await request<{ total: number }>('GET', '/Patient?_summary=count')).total;
    const expected = (files.length + tests.length) * options.copies;
    log(
      `${patients} patients ((${files.length} Synthea + ${tests.length} test patients) × ${options.copies}); loaded ${toLoad} Synthea bundles in ${((performance.now() - loadStart) / 1000).toFixed(0)} s`,
    );
    if (patients !== expected) throw new Error(`the server holds ${patients} patients, not ${expected}`);

    // One copy of every patient, as a Group: its summary times --copies must be the whole's.
    const firstCopies = [...(await Promise.all(files.map(async (f) => (await copiesOf(f))[0]))), ...testPatients];
    const group = await request<{ id: string }>(
      'POST',
      '/Group',
      JSON.stringify({
        resourceType: 'Group',
        type: 'person',
        actual: true,
        member: firstCopies.map((id) => ({ entity: { reference: `Patient/${id}` } })),
      }),
    );

    const rssBeforeKb = memoryKb(server.pid, 'VmRSS');
    let peakReset = true;
    try {
      writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
    } catch {
      peakReset = false;
    }
    const evaluate = (extra = '') =>
      request<Report>('GET', `/Measure/${MEASURE}/$evaluate-measure?${PERIOD}&reportType=population${extra}`);
    const times: number[] = [];
    const cpu: number[] = [];
    let report: Report | undefined;
    for (let run = 0; run < options.runs; run++) {
      const cpuBefore = processCpuMs(server.pid) ?? 0;
      const start = performance.now();
      report = await evaluate();
      times.push(performance.now() - start);
      cpu.push((processCpuMs(server.pid) ?? 0) - cpuBefore);
      log(`run ${run + 1}: ${(times[run] / 1000).toFixed(1)} s, server CPU ${(cpu[run] / 1000).toFixed(1)} s`);
    }
    const peakKb = memoryKb(server.pid, 'VmHWM');
    const groupStart = performance.now();
    const one = await evaluate(`&subject=Group/${group.id}`);
    const groupMs = performance.now() - groupStart;
    const whole = counts(report);
    const consistent = [...counts(one)].every(([code, n]) => whole.get(code) === n * options.copies);

    const mb = (kb: number | undefined) => (kb === undefined ? '?' : (kb / 1024).toFixed(0));
    const t = median(times);
    const lines = [
      '',
      `Measure/$evaluate-measure, summary of ${MEASURE} (CQL) over ${patients} patients (${files.length * options.copies} Synthea, ${tests.length * options.copies} test), ${PERIOD}`,
      `  time: median ${(t / 1000).toFixed(1)} s of ${options.runs} (${times.map((x) => (x / 1000).toFixed(1)).join(', ')} s): ${((patients * 1000) / t).toFixed(0)} patients/s, ${(t / patients).toFixed(1)} ms per patient`,
      `  server CPU: median ${(median(cpu) / 1000).toFixed(1)} s, ${(median(cpu) / patients).toFixed(1)} ms per patient (the figure the machine's other load moves least)`,
      `  server memory: ${mb(rssBeforeKb)} MB resident before, peak ${mb(peakKb)} MB during the evaluations${peakReset ? '' : ' (peak since start: /proc clear_refs could not be written)'}`,
      `  populations: ${describe(report)}`,
      `  one copy (Group of ${firstCopies.length}, ${(groupMs / 1000).toFixed(1)} s): ${describe(one)}; × ${options.copies} = the whole: ${consistent ? 'yes' : 'NO'}`,
      `  load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    if (!consistent) process.exitCode = 1;
  } finally {
    await server.stop();
  }
}
