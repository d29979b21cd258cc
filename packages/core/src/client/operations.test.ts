import { describe, expect, it } from 'vitest';
import { HearthClient } from './client.js';
import { MemoryStorage } from './storage.js';
import { MockFetch, outcome } from './mock-fetch.test-util.js';
import { readTranslateOutput, translateParameters } from './operations.js';

const BASE = 'http://hearth.test/';

function setup() {
  const mock = new MockFetch();
  const client = new HearthClient({ baseUrl: BASE, fetch: mock.fetch, storage: new MemoryStorage(), cacheTime: 0 });
  return { mock, client };
}

describe('operation parameters', () => {
  it('builds $translate Parameters with each input in its FHIR type, the id left for the path', () => {
    expect(
      translateParameters({
        id: 'm1',
        url: 'https://x/map',
        code: 'F',
        system: 'https://x/cs',
        coding: { system: 'https://x/cs', code: 'M' },
        targetsystem: 'http://hl7.org/fhir/administrative-gender',
        reverse: true,
        conceptMapVersion: '2',
      }).parameter,
    ).toEqual([
      { name: 'url', valueUri: 'https://x/map' },
      { name: 'code', valueCode: 'F' },
      { name: 'system', valueUri: 'https://x/cs' },
      { name: 'coding', valueCoding: { system: 'https://x/cs', code: 'M' } },
      { name: 'targetsystem', valueUri: 'http://hl7.org/fhir/administrative-gender' },
      { name: 'reverse', valueBoolean: true },
      { name: 'conceptMapVersion', valueString: '2' },
    ]);
  });

  it("reads $translate's answer, products included", () => {
    expect(
      readTranslateOutput({
        resourceType: 'Parameters',
        parameter: [
          { name: 'result', valueBoolean: true },
          { name: 'message', valueString: 'one match' },
          {
            name: 'match',
            part: [
              { name: 'equivalence', valueCode: 'wider' },
              { name: 'concept', valueCoding: { system: 's', code: 'c' } },
              { name: 'source', valueUri: 'https://x/map' },
              {
                name: 'product',
                part: [
                  { name: 'element', valueUri: 'laterality' },
                  { name: 'concept', valueCoding: { system: 's', code: 'left' } },
                ],
              },
            ],
          },
        ],
      }),
    ).toEqual({
      result: true,
      message: 'one match',
      match: [
        {
          equivalence: 'wider',
          concept: { system: 's', code: 'c' },
          source: 'https://x/map',
          product: [{ element: 'laterality', concept: { system: 's', code: 'left' } }],
        },
      ],
    });
    expect(
      readTranslateOutput({ resourceType: 'Parameters', parameter: [{ name: 'result', valueBoolean: false }] }),
    ).toEqual({
      result: false,
      match: [],
    });
  });
});

describe('HearthClient operation helpers', () => {
  it('starts an import asynchronously and resolves with the Content-Location status URL', async () => {
    const { mock, client } = setup();
    mock.on('POST', '/fhir/R4/$import', (req) =>
      req.headers.prefer === 'respond-async'
        ? new Response(null, { status: 202, headers: { 'content-location': '/fhir/R4/job/j1/status' } })
        : outcome('bad-request', 400, 'Prefer: respond-async is required'),
    );
    const manifest = {
      inputFormat: 'application/fhir+ndjson' as const,
      inputSource: 'https://exporter.example/',
      input: [{ type: 'Patient', url: 'https://exporter.example/Patient.ndjson' }],
    };
    expect(await client.startImport(manifest)).toBe('http://hearth.test/fhir/R4/job/j1/status');
    const sent = mock.to('POST', '/fhir/R4/$import')[0];
    expect(JSON.parse(sent.body)).toEqual(manifest);
    expect(sent.headers['content-type']).toBe('application/json');
    await expect(client.startImport({ input: [] })).rejects.toMatchObject({
      outcome: { issue: [{ expression: ['input'] }] },
    });
  });

  it('rejects with the server outcome when the import is refused, and when no status URL comes back', async () => {
    const { mock, client } = setup();
    mock.on('POST', '/fhir/R4/$import', () => outcome('forbidden', 403, 'Only project admins import'));
    await expect(client.startImport({ input: [{ type: 'Patient', url: 'Binary/b1' }] })).rejects.toMatchObject({
      outcome: { issue: [{ details: { text: 'Only project admins import' } }] },
    });
    mock.on('POST', '/fhir/R4/$import', () => new Response(null, { status: 202 }));
    await expect(client.startImport({ input: [{ type: 'Patient', url: 'Binary/b1' }] })).rejects.toThrow(
      /without a Content-Location/,
    );
  });
});
