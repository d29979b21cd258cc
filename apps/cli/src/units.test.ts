/** Unit tests of the CLI's helpers: paths, queries, tables, import sources and state, profiles, manifests. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliClient, normalizeBaseUrl } from './client.js';
import { parseManifest } from './commands/export.js';
import { resolvePath, searchQuery } from './commands/rest.js';
import { contentTypeOf, isJsonType, parseHeaders } from './input.js';
import { jsonChunks, lineItem, openImportFile, resourceEntry, type Chunk } from './import/sources.js';
import { defaultStatePath, ImportState } from './import/state.js';
import { formatTable } from './output.js';
import { loadProfile, ProfileStorage, saveProfile, type Profile } from './profiles.js';

let dir: string;
let savedHome: string | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hearth-cli-unit-'));
  savedHome = process.env.HOME;
  process.env.HOME = dir;
});
afterEach(() => {
  process.env.HOME = savedHome;
  rmSync(dir, { recursive: true, force: true });
});

describe('paths and arguments', () => {
  const hearth = new CliClient({ baseUrl: 'http://h.example/' });

  it('resolves FHIR paths below the FHIR base and platform paths below the base URL', () => {
    expect(resolvePath(hearth, 'Patient/1')).toBe('http://h.example/fhir/R4/Patient/1');
    expect(resolvePath(hearth, '/Patient?name=a')).toBe('http://h.example/fhir/R4/Patient?name=a');
    expect(resolvePath(hearth, '$export')).toBe('http://h.example/fhir/R4/$export');
    expect(resolvePath(hearth, 'auth/me')).toBe('http://h.example/auth/me');
    expect(resolvePath(hearth, '/admin/projects/1')).toBe('http://h.example/admin/projects/1');
    expect(resolvePath(hearth, 'fhir/R4/metadata')).toBe('http://h.example/fhir/R4/metadata');
    expect(resolvePath(hearth, 'healthcheck')).toBe('http://h.example/healthcheck');
    expect(resolvePath(hearth, 'https://other.example/x')).toBe('https://other.example/x');
    // A resource type that merely starts like a platform path is FHIR.
    expect(resolvePath(hearth, 'AuthorizationPolicy')).toBe('http://h.example/fhir/R4/AuthorizationPolicy');
  });

  it('builds search queries from name=value arguments and query strings', () => {
    expect(searchQuery(['name=smith', '_count=5']).toString()).toBe('name=smith&_count=5');
    expect(searchQuery(['?a=1&b=2', 'a=3']).getAll('a')).toEqual(['1', '3']);
    expect(() => searchQuery(['=x'])).toThrow(/Invalid search parameter/);
  });

  it('normalizes base URLs and refuses others', () => {
    expect(normalizeBaseUrl('http://localhost:8103')).toBe('http://localhost:8103/');
    expect(() => normalizeBaseUrl('ftp://x')).toThrow(/http or https/);
    expect(() => normalizeBaseUrl('not a url')).toThrow(/Invalid base URL/);
  });

  it('parses headers and guesses content types', () => {
    expect(parseHeaders(['If-Match: W/"2"', 'X-A:b'])).toEqual({ 'If-Match': 'W/"2"', 'X-A': 'b' });
    expect(() => parseHeaders(['nocolon'])).toThrow(/Invalid header/);
    expect(contentTypeOf('bot.ts')).toBe('text/typescript');
    expect(contentTypeOf('msg.hl7')).toBe('x-application/hl7-v2+er7');
    expect(contentTypeOf('x.unknown')).toBeUndefined();
    expect(isJsonType('application/fhir+json; charset=utf-8')).toBe(true);
    expect(isJsonType('text/plain')).toBe(false);
  });

  it('formats tables padded to the widest cell', () => {
    expect(
      formatTable(
        ['id', 'name'],
        [
          ['1', 'Ann'],
          ['22', 'Bo'],
        ],
      ),
    ).toBe('id  name\n--  ----\n1   Ann\n22  Bo');
  });
});

describe('import sources', () => {
  const sizes = (chunks: Chunk[]) => chunks.map((c) => `${c.type}:${c.items.length}`);

  it('makes PUT entries of resources with ids and POST entries of others', () => {
    expect(resourceEntry({ resourceType: 'Patient', id: 'a' }).request).toEqual({ method: 'PUT', url: 'Patient/a' });
    expect(resourceEntry({ resourceType: 'Patient' }).request).toEqual({ method: 'POST', url: 'Patient' });
    expect(lineItem('{ bad', 3)).toMatchObject({ where: 'line 3', invalid: expect.stringContaining('not valid JSON') });
    expect(lineItem('{"a":1}', 4).invalid).toContain('no resourceType');
  });

  it('chunks Bundles by type: transactions whole, urn references whole, batches and collections in chunks', () => {
    const entries = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ resource: { resourceType: 'Patient', id: `p${i}` } }));
    const tx = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: entries(5).map((e) => ({ ...e, request: { method: 'POST', url: 'Patient' } })),
    };
    expect(sizes(jsonChunks(tx, 2, 'batch', 'tx.json'))).toEqual(['transaction:5']);
    const batch = {
      resourceType: 'Bundle',
      type: 'batch',
      entry: [...tx.entry, { request: { method: 'DELETE', url: 'Patient/x' } }],
    };
    const batchChunks = jsonChunks(batch, 4, 'batch', 'b.json');
    expect(sizes(batchChunks)).toEqual(['batch:4', 'batch:2']);
    expect(batchChunks[1].items[1].entry?.request).toEqual({ method: 'DELETE', url: 'Patient/x' });
    const collection = { resourceType: 'Bundle', type: 'collection', entry: entries(5) };
    expect(sizes(jsonChunks(collection, 2, 'transaction', 'c.json'))).toEqual([
      'transaction:2',
      'transaction:2',
      'transaction:1',
    ]);
    const linked = {
      resourceType: 'Bundle',
      type: 'collection',
      entry: [{ fullUrl: 'urn:uuid:1', resource: { resourceType: 'Patient' } }, ...entries(3)],
    };
    const linkedChunks = jsonChunks(linked, 2, 'batch', 'l.json');
    expect(sizes(linkedChunks)).toEqual(['transaction:4']);
    expect(linkedChunks[0].items[0].entry?.fullUrl).toBe('urn:uuid:1');
    const searchset = {
      resourceType: 'Bundle',
      type: 'searchset',
      entry: [...entries(2), { resource: { resourceType: 'OperationOutcome' }, search: { mode: 'outcome' } }],
    };
    expect(sizes(jsonChunks(searchset, 10, 'batch', 's.json'))).toEqual(['batch:2']);
  });

  it('reads arrays and single resources, and refuses other JSON', () => {
    const array = jsonChunks([{ resourceType: 'Patient' }, 5], 10, 'batch', 'a.json');
    expect(array[0].items[1].invalid).toContain('not a FHIR resource');
    expect(sizes(jsonChunks({ resourceType: 'Patient' }, 10, 'transaction', 'p.json'))).toEqual(['transaction:1']);
    expect(() => jsonChunks({ hello: 1 }, 10, 'batch', 'x.json')).toThrow(/neither a FHIR resource/);
  });

  it('streams NDJSON (also gzipped) in chunks, parsing only the chunks needed', async () => {
    const lines = [
      '{"resourceType":"Patient","id":"1"}',
      '',
      '{"resourceType":"Patient","id":"2"}',
      '{"resourceType":"Patient","id":"3"}',
    ];
    const path = join(dir, 'p.ndjson.gz');
    writeFileSync(path, gzipSync(lines.join('\n')));
    const file = await openImportFile(path, 2, 'batch');
    expect(file).toMatchObject({ format: 'ndjson', count: 3, chunkCount: 2 });
    const chunks: Chunk[] = [];
    for await (const chunk of file.chunks((i) => i === 1)) {
      chunks.push(chunk);
    }
    expect(chunks[0].items).toEqual([{ where: 'line 1' }, { where: 'line 3' }]);
    expect(chunks[1].items[0]).toMatchObject({ where: 'line 4', entry: { request: { url: 'Patient/3' } } });
    // A .json file that is not one JSON value is NDJSON.
    const json = join(dir, 'lines.json');
    writeFileSync(json, lines.join('\n'));
    expect((await openImportFile(json, 10, 'batch')).format).toBe('ndjson');
  });
});

describe('import state', () => {
  const key = {
    baseUrl: 'http://h/',
    project: 'Project/1',
    mode: 'transaction' as const,
    batchSize: 10,
    files: ['/b', '/a'],
  };

  it('is named after the import, saved privately, resumed, and restarted for a changed file', () => {
    const path = defaultStatePath(key);
    expect(path).toBe(defaultStatePath({ ...key, files: ['/a', '/b'] }));
    expect(path).not.toBe(defaultStatePath({ ...key, batchSize: 11 }));
    const state = ImportState.open(path, key, false);
    expect(state.resumed).toBe(false);
    state.prepareFile('/a', 'f1');
    state.setChunk('/a', 0, { status: 'done' });
    state.setChunk('/a', 1, { status: 'failed', failed: [2] });
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const again = ImportState.open(path, key, false);
    expect(again.resumed).toBe(true);
    expect(again.prepareFile('/a', 'f1')).toBe(false);
    expect(again.chunk('/a', 1)).toEqual({ status: 'failed', failed: [2] });
    expect(again.counts()).toEqual({ done: 1, failed: 1 });
    expect(again.prepareFile('/a', 'f2')).toBe(true);
    expect(again.chunk('/a', 0)).toBeUndefined();

    expect(() => ImportState.open(path, { ...key, mode: 'batch' }, false)).toThrow(/--restart/);
    expect(ImportState.open(path, { ...key, mode: 'batch' }, true).resumed).toBe(false);
    again.remove();
  });
});

describe('profiles', () => {
  it('keeps one login per project; the active one is the session', () => {
    const profile: Profile = { name: 'p', baseUrl: 'http://h/', logins: {} };
    const storage = new ProfileStorage(profile);
    storage.setItem('activeLogin', JSON.stringify({ accessToken: 'a1', project: { reference: 'Project/1' } }));
    storage.describeActiveLogin({ projectName: 'One' });
    storage.setItem('activeLogin', JSON.stringify({ accessToken: 'b1', project: { reference: 'Project/2' } }));
    // A renewal keeps the names.
    storage.setItem('activeLogin', JSON.stringify({ accessToken: 'b2', project: { reference: 'Project/2' } }));
    const stored = loadProfile('p') as Profile;
    expect(stored.activeProject).toBe('Project/2');
    expect(Object.keys(stored.logins)).toEqual(['Project/1', 'Project/2']);
    expect(stored.logins['Project/1'].projectName).toBe('One');
    expect(JSON.parse(new ProfileStorage(stored).getItem('activeLogin') as string).accessToken).toBe('b2');
    const file = join(dir, '.hearth', 'profiles', 'p.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    storage.removeItem('activeLogin');
    expect(loadProfile('p')?.logins['Project/2']).toBeUndefined();
    expect(() => saveProfile({ ...profile, name: '../x' })).toThrow(/Invalid profile name/);
    expect(readFileSync(file, 'utf8')).toContain('Project/1');
  });
});

describe('export manifests', () => {
  it('reads the bulk data manifest and an AsyncJob with output parameters', () => {
    const manifest = parseManifest({ transactionTime: 't', output: [{ type: 'Patient', url: 'http://x/1' }] });
    expect(manifest.output).toHaveLength(1);
    expect(manifest.error).toEqual([]);
    const job = parseManifest({
      resourceType: 'AsyncJob',
      output: {
        resourceType: 'Parameters',
        parameter: [
          {
            name: 'output',
            part: [
              { name: 'type', valueCode: 'Observation' },
              { name: 'url', valueUri: 'http://x/2' },
            ],
          },
          {
            name: 'error',
            part: [
              { name: 'type', valueCode: 'OperationOutcome' },
              { name: 'url', valueUri: 'http://x/3' },
            ],
          },
        ],
      },
    });
    expect(job.output).toEqual([{ type: 'Observation', url: 'http://x/2', count: undefined }]);
    expect(job.error[0].url).toBe('http://x/3');
    expect(() => parseManifest({ resourceType: 'OperationOutcome' })).toThrow(/not a bulk data manifest/);
  });
});
