// Real-world Bundles: the Synthea provider batches (conditional creates) and patient transactions
// (urn:uuid and conditional references) from ../shared/data/synthea-r4, when present.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/app.js';

const DIR = resolve(import.meta.dirname, '../../../../../../shared/data/synthea-r4');
const present = existsSync(`${DIR}/patients`);

interface ResponseBundle {
  type: string;
  entry: { response: { status: string; location?: string }; resource?: { resourceType: string; id: string } }[];
}

let t: TestApp;

beforeAll(async () => {
  if (present) {
    t = await createTestApp();
  }
});
afterAll(async () => {
  await t?.close();
});

function load(file: string): string {
  return gunzipSync(readFileSync(file)).toString('utf8');
}

async function post(body: string): Promise<{ status: number; bundle: ResponseBundle }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/fhir/R4',
    headers: { ...t.authHeaders, 'content-type': 'application/fhir+json' },
    payload: body,
  });
  return { status: res.statusCode, bundle: res.json() };
}

describe.skipIf(!present)('Synthea bundles', () => {
  it('loads the provider batches, conditional creates matching on a second load', async () => {
    const providers = readdirSync(DIR).filter((f) => /^(hospital|practitioner)Information.*\.json\.gz$/.test(f));
    expect(providers).toHaveLength(2);
    for (const file of providers) {
      const body = load(`${DIR}/${file}`);
      const first = await post(body);
      expect(first.status).toBe(200);
      const statuses = first.bundle.entry.map((e) => e.response.status);
      expect(
        statuses.filter((s) => !s.startsWith('201') && !s.startsWith('200')),
        file,
      ).toEqual([]);
      // The same batch again: every conditional create finds what the first load made
      // (PractitionerRoles are plain creates in these files, so they are created again).
      const conditional = new Set(
        (JSON.parse(body) as { entry: { request: { ifNoneExist?: string } }[] }).entry
          .map((e, i) => (e.request.ifNoneExist ? i : -1))
          .filter((i) => i >= 0),
      );
      expect(conditional.size).toBeGreaterThan(100);
      const second = await post(body);
      const again = second.bundle.entry.filter((_, i) => conditional.has(i)).map((e) => e.response.status);
      expect(
        again.filter((s) => !s.startsWith('200')),
        file,
      ).toEqual([]);
    }
  });

  it('imports patient transactions, resolving urn:uuid and conditional references', async () => {
    const files = readdirSync(`${DIR}/patients`).sort().slice(0, 3);
    let resources = 0;
    let seconds = 0;
    for (const file of files) {
      const body = load(`${DIR}/patients/${file}`);
      const entries = (JSON.parse(body) as { entry: unknown[] }).entry.length;
      const started = performance.now();
      const { status, bundle } = await post(body);
      seconds += (performance.now() - started) / 1000;
      expect(status, JSON.stringify(bundle).slice(0, 500)).toBe(200);
      expect(bundle.type).toBe('transaction-response');
      expect(bundle.entry).toHaveLength(entries);
      resources += entries;
      const patient = bundle.entry.find((e) => e.resource?.resourceType === 'Patient')!.resource!;
      const encounter = bundle.entry.find((e) => e.resource?.resourceType === 'Encounter')!.resource as unknown as {
        subject: { reference: string };
        participant?: { individual?: { reference?: string } }[];
        serviceProvider?: { reference?: string };
      };
      expect(encounter.subject.reference).toBe(`Patient/${patient.id}`);
      // Conditional references (Practitioner?identifier=...) now name the providers loaded above.
      for (const ref of [encounter.participant?.[0]?.individual?.reference, encounter.serviceProvider?.reference]) {
        if (ref) {
          expect(ref).toMatch(/^(Practitioner|Organization)\/[A-Za-z0-9\-.]+$/);
          const read = await t.app.inject({ url: `/fhir/R4/${ref}`, headers: t.authHeaders });
          expect(read.statusCode, ref).toBe(200);
        }
      }
    }
    console.log(
      `Synthea: ${resources} resources in ${files.length} patient transactions, ${Math.round(resources / seconds)} resources/s`,
    );
  });
});
