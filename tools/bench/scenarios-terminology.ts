import type { BenchContext, Scenario } from './scenario.js';
import { prng } from './data.js';

/** Syllables of the generated displays: words that share prefixes, as clinical terms do. */
const SYLLABLES =
  'car dio neu ro gas tro hep a to my path itis osis al ic pulm on ren derm hem ost eo arth ven lym pho cyt oma ure thy id'.split(
    ' ',
  );
const CODES = 10_000;
const GROUPS = 100;

/**
 * Issue 8's terminology workloads. A 10,000-code system with a two-level hierarchy is imported
 * through the streaming `CodeSystem/$import` (NDJSON; its rate is printed), then: type-ahead
 * `$expand` with filter text and count 20 at concurrency 1 (a user typing: target p95 < 50 ms) and
 * at the run's concurrency, an `is-a` expansion, `$lookup`, `ValueSet/$validate-code` and
 * `ConceptMap/$translate` on the R4 content.
 */
export async function terminologyScenarios(ctx: BenchContext): Promise<Scenario[]> {
  const { client } = ctx;
  const run = Date.now().toString(36);
  const system = `http://example.org/bench/CodeSystem/typeahead-${run}`;
  const valueSet = `http://example.org/bench/ValueSet/typeahead-${run}`;
  const rand = prng(8);
  const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)];
  const vocabulary = Array.from({ length: 600 }, () =>
    Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(SYLLABLES)).join(''),
  );

  await client.expect(201, 'POST', '/CodeSystem', {
    resourceType: 'CodeSystem',
    url: system,
    status: 'active',
    content: 'not-present',
    hierarchyMeaning: 'is-a',
  });
  await client.expect(201, 'POST', '/ValueSet', {
    resourceType: 'ValueSet',
    url: valueSet,
    status: 'active',
    compose: { include: [{ system }] },
  });
  const lines: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    lines.push(JSON.stringify({ code: `G${g}`, display: `Group ${g} ${pick(vocabulary)}` }));
    for (let i = 0; i < CODES / GROUPS - 1; i++) {
      const words = Array.from({ length: 3 + Math.floor(rand() * 3) }, () => pick(vocabulary));
      lines.push(JSON.stringify({ code: `C${g}-${i}`, display: words.join(' '), parent: `G${g}` }));
    }
  }
  const started = Date.now();
  await client.expect(200, 'POST', `/CodeSystem/$import?system=${encodeURIComponent(system)}`, lines.join('\n'), {
    'content-type': 'application/x-ndjson',
  });
  const seconds = (Date.now() - started) / 1000;
  ctx.log(
    `imported ${lines.length} concepts with hierarchy in ${seconds.toFixed(1)} s: ${(lines.length / seconds).toFixed(0)} concepts/s`,
  );

  // Type-ahead filters: 3 to 5 letters of a word, sometimes a second word's start.
  const filters = Array.from({ length: 500 }, () => {
    const word = pick(vocabulary);
    const prefix = word.slice(0, 3 + Math.floor(rand() * 3));
    return rand() < 0.3 ? `${prefix} ${pick(vocabulary).slice(0, 3)}` : prefix;
  });
  const get = async (path: string): Promise<void> => {
    await client.expect(200, 'GET', path);
  };
  const expand = (i: number) =>
    get(
      `/ValueSet/$expand?url=${encodeURIComponent(valueSet)}&count=20&filter=${encodeURIComponent(filters[i % filters.length])}`,
    );
  const isA = `${valueSet}-isa`;
  await client.expect(201, 'POST', '/ValueSet', {
    resourceType: 'ValueSet',
    url: isA,
    status: 'active',
    compose: { include: [{ system, filter: [{ property: 'concept', op: 'is-a', value: 'G42' }] }] },
  });
  const actCodes = ['AE', 'CASH', 'DN', 'CC', 'AMB', 'IMP', 'EMER', 'HH'];
  const statuses = ['final', 'amended', 'preliminary', 'bogus'];
  return [
    {
      name: '$expand type-ahead over 10,000 codes (filter, count 20), one user',
      unit: 'req/s',
      target: 'p95 < 50 ms',
      concurrency: 1,
      op: (_w, i) => expand(i),
    },
    {
      name: '$expand type-ahead over 10,000 codes (filter, count 20)',
      unit: 'req/s',
      op: (_w, i) => expand(i),
    },
    {
      name: '$expand is-a (100 codes of a 10,000-code hierarchy)',
      unit: 'req/s',
      op: () => get(`/ValueSet/$expand?url=${encodeURIComponent(isA)}`),
    },
    {
      name: 'CodeSystem/$lookup (v3-ActCode)',
      unit: 'req/s',
      op: (_w, i) =>
        get(
          `/CodeSystem/$lookup?system=http://terminology.hl7.org/CodeSystem/v3-ActCode&code=${actCodes[i % actCodes.length]}`,
        ),
    },
    {
      name: 'ValueSet/$validate-code (observation-status)',
      unit: 'req/s',
      op: (_w, i) =>
        get(
          `/ValueSet/$validate-code?url=http://hl7.org/fhir/ValueSet/observation-status&system=http://hl7.org/fhir/observation-status&code=${statuses[i % statuses.length]}`,
        ),
    },
    {
      name: 'ConceptMap/$translate (administrative-gender to v2)',
      unit: 'req/s',
      op: (_w, i) =>
        get(
          `/ConceptMap/$translate?url=http://hl7.org/fhir/ConceptMap/cm-administrative-gender-v2&system=http://hl7.org/fhir/administrative-gender&code=${i % 2 ? 'male' : 'female'}`,
        ),
    },
  ];
}
