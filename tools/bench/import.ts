/**
 * `npm run bench -- --only import`: Bulk Data $import of the 100 Synthea patients
 * (../shared/data/synthea-r4: 74,597 resources with the provider bundles) turned into NDJSON. The
 * bundles' urn:uuid references become Type/id and their conditional references (Organization?
 * identifier=...) the id of the resource with that identifier, as an export from another server
 * would have them. The NDJSON is uploaded as Binaries of at most FILE_LINES lines each (not timed);
 * then one $import names them all and is timed from kick-off to its completed manifest. Prints
 * resources/s and the error count.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { signIn } from './auth.js';
import { startServer } from './server.js';

const DATA = resolve(process.env.HEARTH_BENCH_SYNTHEA || '../shared/data/synthea-r4');
const FILE_LINES = 5000;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function bundle(file: string): Json {
  return JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as Json;
}

/** Every resource of the data set, references rewritten to Type/id, grouped by type. */
export function syntheaNdjson(dir = DATA): Map<string, string[]> {
  const bundles = [
    ...readdirSync(dir)
      .filter((f) => f.endsWith('.json.gz'))
      .map((f) => join(dir, f)),
    ...readdirSync(join(dir, 'patients')).map((f) => join(dir, 'patients', f)),
  ].map(bundle);
  const byUrl = new Map<string, string>();
  const byIdentifier = new Map<string, string>();
  const resources: Json[] = [];
  for (const b of bundles) {
    for (const entry of b.entry as Json[]) {
      const r = entry.resource as Json;
      r.id ??= String(entry.fullUrl).replace(/^urn:uuid:/, '');
      byUrl.set(entry.fullUrl as string, `${r.resourceType}/${r.id}`);
      for (const id of (r.identifier as Json[] | undefined) ?? []) {
        byIdentifier.set(`${r.resourceType}?identifier=${id.system}|${id.value}`, `${r.resourceType}/${r.id}`);
      }
      resources.push(r);
    }
  }
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value && typeof value === 'object') {
      const out: Json = {};
      for (const [k, v] of Object.entries(value)) {
        out[k] = k === 'reference' && typeof v === 'string' ? (byUrl.get(v) ?? byIdentifier.get(v) ?? v) : rewrite(v);
      }
      return out;
    }
    return value;
  };
  const byType = new Map<string, string[]>();
  for (const r of resources) {
    const list = byType.get(r.resourceType as string) ?? [];
    list.push(JSON.stringify(rewrite(r)));
    byType.set(r.resourceType as string, list);
  }
  return byType;
}

export async function runImportBench(
  admin: { email: string; password: string },
  options: { baseUrl?: string },
  log: (line: string) => void,
): Promise<void> {
  if (!existsSync(join(DATA, 'patients'))) {
    log(`no ${DATA}: the import benchmark needs the shared Synthea bundles`);
    return;
  }
  const server = options.baseUrl ? undefined : await startServer(admin);
  const baseUrl = options.baseUrl ?? (server as { baseUrl: string }).baseUrl;
  const fhir = `${baseUrl.replace(/\/$/, '')}/fhir/R4/`;
  try {
    const headers = await signIn(baseUrl, admin.email, admin.password);
    log('converting the Synthea bundles to NDJSON...');
    const byType = syntheaNdjson();
    const total = [...byType.values()].reduce((n, l) => n + l.length, 0);
    const inputs: { type: string; url: string }[] = [];
    log(`uploading ${total} resources as NDJSON Binaries...`);
    for (const [type, lines] of byType) {
      for (let i = 0; i < lines.length; i += FILE_LINES) {
        const res = await fetch(`${fhir}Binary`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/fhir+ndjson' },
          body: lines.slice(i, i + FILE_LINES).join('\n'),
        });
        if (res.status !== 201) throw new Error(`Binary upload: ${res.status} ${await res.text()}`);
        inputs.push({ type, url: `Binary/${((await res.json()) as Json).id as string}` });
      }
    }
    // Referenced types first, so that the data is whole at each step (not required: references are not checked).
    const order = ['Organization', 'Location', 'Practitioner', 'PractitionerRole', 'Patient'];
    const rank = (type: string) => (order.includes(type) ? order.indexOf(type) : order.length);
    inputs.sort((a, b) => rank(a.type) - rank(b.type));
    const manifest = {
      resourceType: 'Parameters',
      parameter: [
        { name: 'inputFormat', valueCode: 'application/fhir+ndjson' },
        ...inputs.map((i) => ({
          name: 'input',
          part: [
            { name: 'type', valueCode: i.type },
            { name: 'url', valueUri: i.url },
          ],
        })),
      ],
    };
    log(`importing ${inputs.length} files...`);
    const start = performance.now();
    const kick = await fetch(`${fhir}$import`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/fhir+json', prefer: 'respond-async' },
      body: JSON.stringify(manifest),
    });
    if (kick.status !== 202) throw new Error(`$import: ${kick.status} ${await kick.text()}`);
    const location = kick.headers.get('content-location') as string;
    let result: Json | undefined;
    while (!result) {
      await new Promise((r) => setTimeout(r, 500));
      const poll = await fetch(location, { headers });
      if (poll.status === 200) result = (await poll.json()) as Json;
      else if (poll.status !== 202) throw new Error(`status: ${poll.status} ${await poll.text()}`);
    }
    const seconds = (performance.now() - start) / 1000;
    const written = (result.output as Json[]).reduce((n, o) => n + (o.count as number), 0);
    const errors = (result.error as Json[]).reduce((n, o) => n + (o.count as number), 0);
    log('');
    log(`$import of ${total} Synthea resources (${inputs.length} NDJSON files): ${written} written, ${errors} errors`);
    log(`  ${seconds.toFixed(1)} s, ${Math.round(written / seconds)} resources/s`);
    if (server) log(`  server peak memory ${server.peakMemoryMb()} MB`);
  } finally {
    await server?.stop();
  }
}
