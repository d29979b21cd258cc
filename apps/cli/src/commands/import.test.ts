/**
 * hearth import against a running server: NDJSON and Bundle files, progress output, the failure
 * summary, and resuming after a chunk failed or the run was interrupted (a proxy in front of the
 * server fails or holds chosen requests).
 */
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../server/src/test/app.js';
import { ensureCliBuilt, runCli, startCli, tempHome, waitForStderr } from '../test/cli.test-util.js';

let t: TestApp;
let home: ReturnType<typeof tempHome>;

beforeAll(async () => {
  await ensureCliBuilt();
  t = await createTestApp({ listen: true });
  home = tempHome();
});
afterAll(async () => {
  await t?.close();
  home?.remove();
});

const hearth = (args: string[], baseUrl = t.baseUrl) =>
  runCli(args, { home: home.home, env: { HEARTH_BASE_URL: baseUrl, HEARTH_ACCESS_TOKEN: t.token } });

function dataDir(name: string): string {
  const dir = join(home.home, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function patients(prefix: string, count: number): string {
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({ resourceType: 'Patient', id: `${prefix}-${i + 1}`, name: [{ family: `${prefix} ${i + 1}` }] }),
  ).join('\n');
}

async function countOf(type: string, query: string): Promise<number> {
  const res = await fetch(new URL(`fhir/R4/${type}?${query}&_summary=count`, t.baseUrl), { headers: t.authHeaders });
  return ((await res.json()) as { total: number }).total;
}

function importStates(): string[] {
  const dir = join(home.home, '.hearth', 'imports');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A proxy to the test server that lets the test decide about each POST of a Bundle. */
async function startProxy(
  decide: (n: number) => Promise<'pass' | 'fail'>,
): Promise<{ url: string; posts: () => number; close(): Promise<void> }> {
  let posts = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const isBundle = req.method === 'POST' && /\/fhir\/R4\/?$/.test(req.url ?? '');
      if (isBundle && (await decide(++posts)) === 'fail') {
        res.writeHead(500, { 'content-type': 'application/fhir+json' });
        res.end(
          JSON.stringify({
            resourceType: 'OperationOutcome',
            issue: [{ severity: 'error', code: 'exception', diagnostics: 'Injected failure' }],
          }),
        );
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) {
          headers[k] = v;
        }
      }
      const upstream = await fetch(new URL(req.url ?? '/', t.baseUrl), {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
      });
      const body = Buffer.from(await upstream.arrayBuffer());
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/`,
    posts: () => posts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('hearth import', () => {
  it('imports NDJSON and Bundle files from a directory, with progress lines', async () => {
    const dir = dataDir('mixed');
    writeFileSync(join(dir, 'patients.ndjson'), `${patients('nd', 25)}\n\n`);
    // A transaction whose entries refer to each other by urn:uuid: sent whole.
    writeFileSync(
      join(dir, 'bundle.json'),
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            fullUrl: 'urn:uuid:1b7c5f4e-0d2a-4b59-9a44-3f1c2e6b7a11',
            resource: { resourceType: 'Patient', name: [{ family: 'TxPatient' }] },
            request: { method: 'POST', url: 'Patient' },
          },
          {
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'tx-obs' },
              subject: { reference: 'urn:uuid:1b7c5f4e-0d2a-4b59-9a44-3f1c2e6b7a11' },
            },
            request: { method: 'POST', url: 'Observation' },
          },
        ],
      }),
    );
    writeFileSync(
      join(dir, 'collection.json'),
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'collection',
        entry: [{ resource: { resourceType: 'Patient', id: 'coll-1', name: [{ family: 'Collected' }] } }],
      }),
    );
    writeFileSync(join(dir, 'notes.txt'), 'not imported');
    const result = await hearth(['import', dir, '--chunk-size', '10']);
    expect(result.stderr).toMatch(/import: \d+\/28 resources/);
    expect(result.stderr).toContain('import: 28/28 resources (100%)');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Imported 28 resources from 3 files (5 of 5 chunks); 0 failed');
    expect(await countOf('Patient', 'family=nd')).toBe(25);
    const observations = await fetch(
      new URL('fhir/R4/Observation?code:text=tx-obs&_include=Observation:subject', t.baseUrl),
      { headers: t.authHeaders },
    );
    const bundle = (await observations.json()) as {
      entry: { resource: { resourceType: string; name?: { family: string }[] } }[];
    };
    expect(bundle.entry.find((e) => e.resource.resourceType === 'Patient')?.resource.name?.[0].family).toBe(
      'TxPatient',
    );
    expect(await countOf('Patient', '_id=coll-1')).toBe(1);
    // Done: no state left behind.
    expect(importStates()).toEqual([]);
  });

  it('draws a progress bar when asked to', async () => {
    const dir = dataDir('bar');
    writeFileSync(join(dir, 'p.ndjson'), patients('bar', 5));
    const result = await hearth(['import', dir, '--chunk-size', '2', '--progress', 'bar']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/import [█░=\-\s]+ 100% \| 5\/5 resources/);
  });

  it('summarises failures with the server outcome, keeps the state, and retries only the failed ones', async () => {
    const dir = dataDir('failing');
    const lines = [
      JSON.stringify({ resourceType: 'Patient', id: 'ok-1' }),
      JSON.stringify({ resourceType: 'Patient', id: 'bad-1', birthDate: 'not-a-date' }),
      '{ not json',
      JSON.stringify({ resourceType: 'Patient', id: 'ok-2' }),
      JSON.stringify({ resourceType: 'Patient', id: 'ok-3' }),
    ];
    writeFileSync(join(dir, 'some-bad.ndjson'), lines.join('\n'));
    const first = await hearth(['import', dir, '--batch', '--chunk-size', '2']);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('Imported 3 resources');
    expect(first.stdout).toContain('2 failed');
    expect(first.stderr).toContain('Failures (2):');
    expect(first.stderr).toMatch(/some-bad\.ndjson line 2 \(PUT Patient\/bad-1\): 4\d\d.*birthDate/);
    expect(first.stderr).toMatch(/some-bad\.ndjson line 3: not valid JSON/);
    expect(first.stderr).toContain('Run the same command again to retry the failed ones');
    expect(importStates()).toHaveLength(1);
    expect(await countOf('Patient', '_id=ok-1,ok-2,ok-3')).toBe(3);

    const again = await hearth(['import', dir, '--batch', '--chunk-size', '2']);
    expect(again.stderr).toMatch(/Resuming the import started .*: 1 of 3 chunks done, 2 to retry/);
    expect(again.stdout).toContain('Imported 0 resources');
    expect(again.stderr).toContain('Failures (2):');
    expect(again.code).toBe(1);

    // As transactions, the chunk with the bad resource is refused whole, naming the line.
    const tx = await hearth([
      'import',
      join(dir, 'some-bad.ndjson'),
      '--chunk-size',
      '2',
      '--restart',
      '--state',
      join(dir, 'tx-state.json'),
    ]);
    expect(tx.code).toBe(1);
    expect(tx.stderr).toMatch(/line 1 \(PUT Patient\/ok-1\): HTTP 4\d\d: .*birthDate.*\[at line 2\]/);
    expect(existsSync(join(dir, 'tx-state.json'))).toBe(true);
  });

  it('resumes after a chunk failed: only the failed chunk is sent again', async () => {
    const dir = dataDir('resume');
    writeFileSync(join(dir, 'p.ndjson'), patients('resume', 10));
    let failSecond = true;
    const proxy = await startProxy(async (n) => (n === 2 && failSecond ? 'fail' : 'pass'));
    try {
      const first = await hearth(['import', dir, '--chunk-size', '3'], proxy.url);
      expect(first.code).toBe(1);
      expect(first.stderr).toMatch(/p\.ndjson line 4 \(PUT Patient\/resume-4\): HTTP 500: Injected failure/);
      expect(proxy.posts()).toBe(4);
      expect(await countOf('Patient', 'family=resume')).toBe(7);

      failSecond = false;
      const second = await hearth(['import', dir, '--chunk-size', '3'], proxy.url);
      expect(second.stderr).toContain('3 of 4 chunks done, 1 to retry');
      expect(second.code).toBe(0);
      expect(proxy.posts()).toBe(5);
      expect(second.stdout).toContain('Imported 3 resources from 1 file (4 of 4 chunks) (7 done in an earlier run)');
      expect(await countOf('Patient', 'family=resume')).toBe(10);
    } finally {
      await proxy.close();
    }
  });

  it('stops cleanly on Ctrl-C after the chunk in flight, and the next run resumes', async () => {
    const dir = dataDir('interrupt');
    writeFileSync(join(dir, 'p.ndjson'), patients('intr', 12));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived: () => void = () => undefined;
    const secondArrived = new Promise<void>((resolve) => (arrived = resolve));
    const proxy = await startProxy(async (n) => {
      if (n === 2) {
        arrived();
        await held;
      }
      return 'pass';
    });
    try {
      const child = startCli(['import', dir, '--chunk-size', '3', '--progress', 'lines'], {
        home: home.home,
        env: { HEARTH_BASE_URL: proxy.url, HEARTH_ACCESS_TOKEN: t.token },
      });
      await secondArrived;
      await waitForStderr(child, /import: 3\/12/);
      child.kill('SIGINT');
      await waitForStderr(child, /Stopping after the chunks in flight/);
      release();
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(130);
      expect(child.output.stderr).toContain('Stopped: run the same command again to resume');
      expect(proxy.posts()).toBe(2);
      expect(await countOf('Patient', 'family=intr')).toBe(6);

      const resumed = await hearth(['import', dir, '--chunk-size', '3'], proxy.url);
      expect(resumed.stderr).toContain('2 of 4 chunks done, 0 to retry');
      expect(resumed.code).toBe(0);
      expect(proxy.posts()).toBe(4);
      expect(await countOf('Patient', 'family=intr')).toBe(12);
    } finally {
      release();
      await proxy.close();
    }
  });
});
