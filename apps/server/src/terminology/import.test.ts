import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../test/app.js';

const FHIR = 'application/fhir+json';
let t: TestApp;

interface Param {
  name: string;
  valueInteger?: number;
  valueBoolean?: boolean;
  valueCode?: string;
  valueString?: string;
  part?: Param[];
}
const param = (body: { parameter?: Param[] }, name: string) => body.parameter?.find((p) => p.name === name);

async function createCodeSystem(id: string, url: string, extra: object = {}) {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/fhir/R4/CodeSystem/${id}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify({
      resourceType: 'CodeSystem',
      id,
      url,
      status: 'active',
      content: 'not-present',
      ...extra,
    }),
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

async function expandTotal(system: string, filter?: object, text?: string): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/fhir/R4/ValueSet/$expand?count=5${text ? `&filter=${encodeURIComponent(text)}` : ''}`,
    headers: { ...t.authHeaders, 'content-type': FHIR },
    payload: JSON.stringify({
      resourceType: 'ValueSet',
      status: 'active',
      compose: { include: [{ system, ...(filter ? { filter: [filter] } : {}) }] },
    }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().expansion.total;
}

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('CodeSystem/$import', () => {
  const SYSTEM = 'http://example.org/fhir/CodeSystem/big';

  it('streams a few thousand NDJSON concepts with hierarchy', async () => {
    await createCodeSystem('big', SYSTEM);
    // 40 groups under one root, 99 leaves each, and every 10th leaf also under the next group.
    const lines: string[] = [JSON.stringify({ code: 'root', display: 'Everything' })];
    for (let g = 0; g < 40; g++) {
      for (let i = 0; i < 99; i++) {
        const parent = i % 10 === 0 ? [`G${g}`, `G${(g + 1) % 40}`] : `G${g}`;
        lines.push(JSON.stringify({ code: `L${g}-${i}`, display: `Leaf ${g} number ${i}`, parent }));
      }
      // Groups come after their children: order does not matter.
      lines.push(
        JSON.stringify({
          code: `G${g}`,
          display: `Group ${g}`,
          parent: 'root',
          property: [{ code: 'kind', valueCode: 'group' }],
        }),
      );
    }
    const started = Date.now();
    const res = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/CodeSystem/$import?system=${encodeURIComponent(SYSTEM)}`,
      headers: { ...t.authHeaders, 'content-type': 'application/x-ndjson' },
      payload: lines.join('\n') + '\n',
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    console.log(
      `imported ${lines.length} NDJSON concepts in ${Date.now() - started} ms`,
      JSON.stringify(body.parameter),
    );
    expect(param(body, 'concepts')?.valueInteger).toBe(4001);
    expect(param(body, 'parentLinks')?.valueInteger).toBe(40 * 99 + 40 * 10 + 40);

    expect(await expandTotal(SYSTEM)).toBe(4001);
    expect(await expandTotal(SYSTEM, { property: 'concept', op: 'is-a', value: 'G3' })).toBe(1 + 99 + 10);
    expect(await expandTotal(SYSTEM, { property: 'concept', op: 'descendent-of', value: 'root' })).toBe(4000);
    expect(await expandTotal(SYSTEM, { property: 'kind', op: '=', value: 'group' })).toBe(40);
    expect(await expandTotal(SYSTEM, undefined, 'number 42')).toBe(40);

    const subsumes = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/CodeSystem/$subsumes?system=${SYSTEM}&codeA=root&codeB=L7-30`,
    });
    expect(param(subsumes.json(), 'outcome')?.valueCode).toBe('subsumes');
    const lookup = (
      await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/CodeSystem/$lookup?system=${SYSTEM}&code=L7-30` })
    ).json();
    const parents = lookup.parameter
      .filter((p: Param) => p.name === 'property' && p.part?.[0].valueCode === 'parent')
      .map((p: Param) => p.part?.[1].valueCode)
      .sort();
    expect(parents).toEqual(['G7', 'G8']);
  });

  it('keeps imported concepts when the CodeSystem resource is updated without concepts', async () => {
    await createCodeSystem('big', SYSTEM, { title: 'Renamed' });
    expect(await expandTotal(SYSTEM)).toBe(4001);
  });

  it('imports CSV with quoted fields, a where filter and property columns', async () => {
    const url = 'http://example.org/fhir/CodeSystem/labs';
    await createCodeSystem('labs', url);
    const csv = [
      'LOINC_NUM,LONG_COMMON_NAME,SCALE_TYP,STATUS',
      '2345-7,"Glucose [Mass/volume] in Serum or Plasma",Qn,ACTIVE',
      '718-7,"Hemoglobin [Mass/volume] in Blood",Qn,ACTIVE',
      '882-1,"ABO and Rh group, ""typed""\nin Blood",Nom,ACTIVE',
      '9999-9,Old test,Qn,DEPRECATED',
    ].join('\r\n');
    const res = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/CodeSystem/labs/$import?codeColumn=LOINC_NUM&displayColumn=LONG_COMMON_NAME&where=STATUS%3DACTIVE`,
      headers: { ...t.authHeaders, 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(param(res.json(), 'concepts')?.valueInteger).toBe(3);
    expect(param(res.json(), 'skipped')?.valueInteger).toBe(1);
    expect(await expandTotal(url, { property: 'SCALE_TYP', op: '=', value: 'Qn' })).toBe(2);
    const lookup = (
      await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/CodeSystem/$lookup?system=${url}&code=882-1` })
    ).json();
    expect(param(lookup, 'display')?.valueString).toBe('ABO and Rh group, "typed"\nin Blood');
  });

  it('imports TSV relationships in a second pass (SNOMED CT RF2 style)', async () => {
    const url = 'http://example.org/fhir/CodeSystem/rf2';
    await createCodeSystem('rf2', url);
    const descriptions = [
      'conceptId\tterm\tactive',
      '100\tClinical finding\t1',
      '200\tDisorder of lung\t1',
      '300\tPneumonia\t1',
      '400\tRetired "thing"\t0',
    ];
    const relationships = [
      'sourceId\tdestinationId\ttypeId\tactive',
      '200\t100\t116680003\t1',
      '300\t200\t116680003\t1',
      '300\t100\t999\t1',
    ];
    const post = (query: string, lines: string[]) =>
      t.app.inject({
        method: 'POST',
        url: `/fhir/R4/CodeSystem/$import?system=${url}&${query}`,
        headers: { ...t.authHeaders, 'content-type': 'text/tab-separated-values' },
        payload: lines.join('\n'),
      });
    expect(
      (await post('codeColumn=conceptId&displayColumn=term&where=active%3D1&propertyColumns=', descriptions))
        .statusCode,
    ).toBe(200);
    const rel = await post(
      'codeColumn=sourceId&parentColumn=destinationId&where=typeId%3D116680003&where=active%3D1&propertyColumns=',
      relationships,
    );
    expect(param(rel.json(), 'parentLinks')?.valueInteger).toBe(2);
    expect(await expandTotal(url, { property: 'concept', op: 'is-a', value: '100' })).toBe(3);
    const lookup = (
      await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/CodeSystem/$lookup?system=${url}&code=300` })
    ).json();
    expect(param(lookup, 'display')?.valueString).toBe('Pneumonia');
  });

  it('imports Parameters chunks, extending the hierarchy across requests', async () => {
    const url = 'http://example.org/fhir/CodeSystem/chunks';
    await createCodeSystem('chunks', url);
    const chunk = (concepts: [string, string, string?][]) => ({
      resourceType: 'Parameters',
      parameter: [
        { name: 'system', valueUri: url },
        ...concepts.map(([code, display]) => ({ name: 'concept', valueCoding: { system: url, code, display } })),
        ...concepts
          .filter(([, , parent]) => parent)
          .map(([code, , parent]) => ({
            name: 'property',
            part: [
              { name: 'code', valueCode: code },
              { name: 'property', valueCode: 'parent' },
              { name: 'value', valueCode: parent },
            ],
          })),
      ],
    });
    const post = (body: object) =>
      t.app.inject({
        method: 'POST',
        url: '/fhir/R4/CodeSystem/$import',
        headers: { ...t.authHeaders, 'content-type': FHIR },
        payload: JSON.stringify(body),
      });
    expect(
      (
        await post(
          chunk([
            ['a', 'A'],
            ['b', 'B', 'a'],
          ]),
        )
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await post(
          chunk([
            ['c', 'C', 'b'],
            ['d', 'D', 'c'],
          ]),
        )
      ).statusCode,
    ).toBe(200);
    expect(await expandTotal(url, { property: 'concept', op: 'is-a', value: 'a' })).toBe(4);
    expect(await expandTotal(url, { property: 'concept', op: 'descendent-of', value: 'b' })).toBe(2);
  });

  it('with Prefer: respond-async, answers 202 and reports progress on the AsyncJob until done', async () => {
    const url = 'http://example.org/fhir/CodeSystem/async';
    await createCodeSystem('async', url);
    // 12,000 concepts: three batches of 5,000 (progress is recorded after each).
    const lines: string[] = [];
    for (let g = 0; g < 120; g++) {
      lines.push(JSON.stringify({ code: `G${g}`, display: `Group ${g}` }));
      for (let i = 0; i < 99; i++) {
        lines.push(JSON.stringify({ code: `C${g}-${i}`, display: `Concept ${g} ${i}`, parent: `G${g}` }));
      }
    }
    const kick = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/CodeSystem/$import?system=${encodeURIComponent(url)}`,
      headers: { ...t.authHeaders, 'content-type': 'application/x-ndjson', prefer: 'respond-async' },
      payload: lines.join('\n'),
    });
    expect(kick.statusCode, kick.body).toBe(202);
    expect(kick.json()).toMatchObject({ resourceType: 'AsyncJob', status: 'active' });
    const location = String(kick.headers['content-location']);
    expect(location).toMatch(/\/fhir\/R4\/job\/[\w-]+\/status$/);
    const statusPath = new URL(location).pathname;
    let done: { statusCode: number; json(): { status: string; output: { parameter?: Param[] } } } | undefined;
    for (let i = 0; i < 600 && !done; i++) {
      const poll = await t.app.inject({ headers: t.authHeaders, url: statusPath });
      if (poll.statusCode === 200) {
        done = poll;
      } else {
        expect(poll.statusCode).toBe(202);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(done?.json().status).toBe('completed');
    expect(param(done!.json().output, 'concepts')?.valueInteger).toBe(12_000);
    expect(param(done!.json().output, 'parentLinks')?.valueInteger).toBe(120 * 99);
    // Each batch left its progress on a version of the AsyncJob: growing counts and fractions.
    const id = location.split('/').at(-2);
    const history = (
      await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/AsyncJob/${id}/_history?_count=50` })
    ).json() as {
      entry: {
        resource: { extension?: { extension: { url: string; valueDecimal?: number; valueString?: string }[] }[] };
      }[];
    };
    const progress = history.entry
      .map((e) => e.resource.extension?.[0]?.extension)
      .filter((parts) => parts !== undefined)
      .map((parts) => ({
        fraction: parts.find((p) => p.url === 'fraction')?.valueDecimal ?? -1,
        message: parts.find((p) => p.url === 'message')?.valueString,
      }))
      .reverse();
    expect(progress.map((p) => p.message)).toEqual(['5000 concepts', '10000 concepts', '12000 concepts']);
    const fractions = progress.map((p) => p.fraction);
    expect(fractions[0]).toBeGreaterThan(0);
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);
    expect(await expandTotal(url, { property: 'concept', op: 'is-a', value: 'G7' })).toBe(100);
  });

  it('an asynchronous import with a bad line ends in error, and writes nothing', async () => {
    const url = 'http://example.org/fhir/CodeSystem/async-bad';
    await createCodeSystem('async-bad', url);
    const kick = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/CodeSystem/$import?system=${encodeURIComponent(url)}`,
      headers: { ...t.authHeaders, 'content-type': 'application/x-ndjson', prefer: 'respond-async' },
      payload: '{"code":"ok"}\nnot json\n',
    });
    expect(kick.statusCode).toBe(202);
    const id = kick.json().id as string;
    let job:
      { status: string; output?: { parameter?: { name: string; resource?: { issue: unknown[] } }[] } } | undefined;
    for (let i = 0; i < 300; i++) {
      job = (await t.app.inject({ headers: t.authHeaders, url: `/fhir/R4/AsyncJob/${id}` })).json();
      if (job?.status !== 'active') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(job?.status).toBe('error');
    expect(JSON.stringify(job?.output)).toContain('line 2');
    const lookup = await t.app.inject({
      headers: t.authHeaders,
      url: `/fhir/R4/CodeSystem/$lookup?system=${encodeURIComponent(url)}&code=ok`,
    });
    expect(lookup.statusCode).toBe(404); // rolled back: not even the good first line
    // Options are checked before anything is accepted.
    const badWhere = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/CodeSystem/$import?system=${encodeURIComponent(url)}&where=nonsense`,
      headers: { ...t.authHeaders, 'content-type': 'text/csv', prefer: 'respond-async' },
      payload: 'code\nx\n',
    });
    expect(badWhere.statusCode).toBe(400);
  });

  it('refuses an unknown code system, a bad line, and a missing system', async () => {
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/CodeSystem/$import?system=http://example.org/none',
      headers: { ...t.authHeaders, 'content-type': 'application/x-ndjson' },
      payload: '{"code":"a"}\n',
    });
    expect(unknown.statusCode).toBe(404);
    const badLine = await t.app.inject({
      method: 'POST',
      url: `/fhir/R4/CodeSystem/$import?system=${SYSTEM}`,
      headers: { ...t.authHeaders, 'content-type': 'application/x-ndjson' },
      payload: '{"code":"ok"}\nnot json\n',
    });
    expect(badLine.statusCode).toBe(400);
    expect(badLine.json().issue[0].expression).toEqual(['line 2']);
    expect(await expandTotal(SYSTEM, { property: 'concept', op: '=', value: 'ok' })).toBe(0);
    const noSystem = await t.app.inject({
      method: 'POST',
      url: '/fhir/R4/CodeSystem/$import',
      headers: { ...t.authHeaders, 'content-type': 'text/csv' },
      payload: 'code\nx\n',
    });
    expect(noSystem.statusCode).toBe(400);
  });
});
