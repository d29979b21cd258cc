/**
 * `npm run bench -- --only measures [--copies N] [--runs N]`: a summary `Measure/$evaluate-measure`
 * (CMS122, the published eCQM of ../shared/data/ecqm-r4, run as CQL by cql-execution) over every
 * patient of a server loaded with the Synthea bundles of ../shared/data/synthea-r4.
 *
 * Starts the built server on its own embedded PostgreSQL, loads the two provider batches, then each
 * of the 100 patient transactions `--copies` times (default 10: 1,000 patients). Each load is a new
 * patient: the bundles' entries are POSTs with urn:uuid fullUrls, so the server gives every copy new
 * ids. Then `--runs` summary evaluations over the measurement year 2020 (the data's last full year):
 * the time of each, and the server's peak resident memory (VmHWM) during the evaluations, read from
 * /proc after its peak was reset (clear_refs) once the load was done, beside its memory before.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { signIn } from './auth.js';
import { median } from './load.js';
import { startServer } from './server.js';

const SYNTHEA = resolve(process.env.HEARTH_BENCH_SYNTHEA || '../shared/data/synthea-r4');
const ECQM = resolve(process.env.HEARTH_BENCH_ECQM || '../shared/data/ecqm-r4');
const MEASURE = 'DiabetesHemoglobinA1cHbA1cPoorControl9FHIR';
const PERIOD = 'periodStart=2020-01-01&periodEnd=2020-12-31';
/** Transactions posted at once while loading. */
const LOAD_CONCURRENCY = 2;

function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export async function runMeasuresBench(
  admin: { email: string; password: string },
  options: { runs: number; copies: number },
  log: (line: string) => void,
): Promise<void> {
  if (!existsSync(`${SYNTHEA}/patients`) || !existsSync(`${ECQM}/${MEASURE}`)) {
    log(`no ${SYNTHEA}/patients or ${ECQM}/${MEASURE}: the measures benchmark needs the shared data`);
    return;
  }
  log('starting server (embedded PostgreSQL unless DATABASE_URL is set)...');
  const server = await startServer(admin);
  try {
    const base = `${server.baseUrl}fhir/R4`;
    const headers = {
      ...(await signIn(server.baseUrl, admin.email, admin.password)),
      'content-type': 'application/fhir+json',
    };
    const post = async (body: string, what: string): Promise<void> => {
      const res = await fetch(base, { method: 'POST', headers, body });
      if (!res.ok) throw new Error(`${what}: ${res.status} ${(await res.text()).slice(0, 500)}`);
      await res.arrayBuffer();
    };
    await post(readFileSync(`${ECQM}/${MEASURE}/measure-bundle.json`, 'utf8'), 'measure bundle');
    for (const f of readdirSync(SYNTHEA)
      .filter((f) => /Information.*\.json\.gz$/.test(f))
      .sort()
      .reverse()) {
      await post(gunzipSync(readFileSync(`${SYNTHEA}/${f}`)).toString('utf8'), f);
    }
    const files = readdirSync(`${SYNTHEA}/patients`).sort();
    const jobs = Array.from({ length: options.copies }, () => files).flat();
    const loadStart = performance.now();
    let done = 0;
    const worker = async (): Promise<void> => {
      for (let file = jobs.shift(); file; file = jobs.shift()) {
        await post(gunzipSync(readFileSync(`${SYNTHEA}/patients/${file}`)).toString('utf8'), file);
        if (++done % 100 === 0)
          log(`loaded ${done} patient bundles (${((performance.now() - loadStart) / 1000).toFixed(0)} s)`);
      }
    };
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
    const count = await fetch(`${base}/Patient?_summary=count`, { headers });
    const patients = ((await count.json()) as { total: number }).total;
    log(
      `loaded ${patients} patients (${files.length} bundles × ${options.copies}) in ${((performance.now() - loadStart) / 1000).toFixed(0)} s`,
    );

    const rssBeforeKb = memoryKb(server.pid, 'VmRSS');
    let peakReset = true;
    try {
      writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
    } catch {
      peakReset = false;
    }
    const times: number[] = [];
    let report:
      | {
          group: {
            population: { code: { coding: { code: string }[] }; count: number }[];
            measureScore?: { value: number };
          }[];
        }
      | undefined;
    for (let run = 0; run < options.runs; run++) {
      const start = performance.now();
      const res = await fetch(`${base}/Measure/${MEASURE}/$evaluate-measure?${PERIOD}&reportType=population`, {
        headers,
      });
      const body = await res.json();
      if (!res.ok) throw new Error(`$evaluate-measure: ${res.status} ${JSON.stringify(body).slice(0, 500)}`);
      times.push(performance.now() - start);
      report = body as typeof report;
      log(`run ${run + 1}: ${(times[run] / 1000).toFixed(1)} s`);
    }
    const peakKb = memoryKb(server.pid, 'VmHWM');
    const counts = report?.group[0].population.map((p) => `${p.code.coding[0].code} ${p.count}`).join(', ');
    const mb = (kb: number | undefined) => (kb === undefined ? '?' : (kb / 1024).toFixed(0));
    const lines = [
      '',
      `Measure/$evaluate-measure, summary of ${MEASURE} (CQL) over ${patients} Synthea patients, ${PERIOD}`,
      `  time: median ${(median(times) / 1000).toFixed(1)} s of ${options.runs} (${times.map((t) => (t / 1000).toFixed(1)).join(', ')} s); ${(median(times) / patients).toFixed(1)} ms per patient`,
      `  server memory: ${mb(rssBeforeKb)} MB resident before, peak ${mb(peakKb)} MB during the evaluations${peakReset ? '' : ' (peak since start: /proc clear_refs could not be written)'}`,
      `  populations: ${counts}; score ${report?.group[0].measureScore?.value ?? 'none'}`,
      `  load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await server.stop();
  }
}
