/**
 * hearth export: against the test server (which says clearly when it has no $export: exit 2), and
 * the whole bulk data flow against a small server speaking the Bulk Data protocol (kick-off with
 * Prefer: respond-async, 202 polls with X-Progress and Retry-After, the manifest, NDJSON files
 * that need the token, errors, cancellation).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
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

interface BulkServer {
  url: string;
  requests: { method: string; url: string; prefer?: string; authorization?: string }[];
  close(): Promise<void>;
}

interface BulkBehaviour {
  listed?: boolean;
  kickOffStatus?: number;
  /** Status polls answered 202 before the manifest. */
  polls?: number;
  failJob?: boolean;
  /** Never finishes (for cancellation). */
  endless?: boolean;
}

const TOKEN = 'bulk-test-token';

/** A server with just enough of the Bulk Data protocol. */
async function startBulkServer(behaviour: BulkBehaviour = {}): Promise<BulkServer> {
  const requests: BulkServer['requests'] = [];
  let polls = 0;
  let base = '';
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/fhir+json', ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const authorized = (req: IncomingMessage) => req.headers.authorization === `Bearer ${TOKEN}`;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      prefer: req.headers.prefer as string | undefined,
      authorization: req.headers.authorization,
    });
    if (url.pathname === '/fhir/R4/metadata') {
      const op =
        behaviour.listed === false
          ? []
          : [{ name: 'export', definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/export' }];
      const patientOps =
        behaviour.listed === false
          ? []
          : [{ name: 'export', definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/patient-export' }];
      send(res, 200, {
        resourceType: 'CapabilityStatement',
        rest: [
          {
            mode: 'server',
            operation: op,
            resource: [
              { type: 'Patient', operation: patientOps },
              { type: 'Group', operation: patientOps },
            ],
          },
        ],
      });
    } else if (/\/\$export$/.test(url.pathname)) {
      if (!authorized(req)) {
        send(res, 401, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'login', diagnostics: 'Unauthorized' }],
        });
      } else if (behaviour.kickOffStatus) {
        send(res, behaviour.kickOffStatus, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'not-found', diagnostics: 'No route' }],
        });
      } else {
        send(
          res,
          202,
          {
            resourceType: 'OperationOutcome',
            issue: [{ severity: 'information', code: 'informational', diagnostics: 'Accepted' }],
          },
          { 'content-location': `${base}fhir/R4/bulkstatus/7` },
        );
      }
    } else if (url.pathname === '/fhir/R4/bulkstatus/7') {
      if (req.method === 'DELETE') {
        send(res, 202, undefined);
      } else if (behaviour.failJob) {
        send(res, 500, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'exception', diagnostics: 'Export job crashed' }],
        });
      } else if (behaviour.endless || polls++ < (behaviour.polls ?? 2)) {
        send(res, 202, undefined, { 'x-progress': `${polls * 40}% exporting`, 'retry-after': '0' });
      } else {
        send(res, 200, {
          transactionTime: '2024-01-01T00:00:00Z',
          request: `${base}fhir/R4/$export`,
          requiresAccessToken: true,
          output: [
            { type: 'Patient', url: `${base}files/patient-1.ndjson`, count: 2 },
            { type: 'Observation', url: `${base}files/observation-1.ndjson`, count: 1 },
            { type: 'Observation', url: `${base}files/observation-2.ndjson`, count: 1 },
          ],
          error: [{ type: 'OperationOutcome', url: `${base}files/errors.ndjson` }],
        });
      }
    } else if (url.pathname.startsWith('/files/')) {
      if (!authorized(req)) {
        send(res, 401, {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'login', diagnostics: 'Unauthorized' }],
        });
        return;
      }
      const files: Record<string, string> = {
        '/files/patient-1.ndjson': '{"resourceType":"Patient","id":"a"}\n{"resourceType":"Patient","id":"b"}\n',
        '/files/observation-1.ndjson': '{"resourceType":"Observation","id":"o1"}\n',
        '/files/observation-2.ndjson': '{"resourceType":"Observation","id":"o2"}',
        '/files/errors.ndjson':
          '{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"processing"}]}\n',
      };
      res.writeHead(200, { 'content-type': 'application/fhir+ndjson' });
      res.end(files[url.pathname] ?? '');
    } else {
      send(res, 404, {
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: 'not-found', diagnostics: 'No route' }],
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const hearth = (args: string[], baseUrl: string, token = TOKEN) =>
  runCli(args, { home: home.home, env: { HEARTH_BASE_URL: baseUrl, HEARTH_ACCESS_TOKEN: token } });

describe('hearth export', () => {
  it("exports from Hearth's own server: the files hold the project's resources, one per line", async () => {
    const patient = await fetch(new URL('fhir/R4/Patient', t.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Exported' }] }),
    });
    const { id } = (await patient.json()) as { id: string };
    const out = join(home.home, 'real-export');
    const result = await hearth(
      ['export', '--patient', '--type', 'Patient', '--output', out, '--poll-interval', '0.2'],
      t.baseUrl,
      t.token,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Exported');
    const lines = readFileSync(join(out, 'Patient.ndjson'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual([id]);
  });

  it("saves and shows the error files of Hearth's own server (a Group member that is not there)", async () => {
    const created = await fetch(new URL('fhir/R4/Group', t.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'Group',
        type: 'person',
        actual: true,
        member: [{ entity: { reference: 'Patient/not-a-member-anymore' } }],
      }),
    });
    const { id } = (await created.json()) as { id: string };
    const out = join(home.home, 'real-export-errors');
    const result = await hearth(
      ['export', '--group', id, '--type', 'Patient', '--output', out, '--poll-interval', '0.2'],
      t.baseUrl,
      t.token,
    );
    expect(result.code, result.stderr).toBe(0);
    const text = 'Group member Patient/not-a-member-anymore is not exported: no such Patient, deleted, or not readable';
    const lines = readFileSync(join(out, 'OperationOutcome.errors.ndjson'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { issue: { diagnostics: string }[] }).issue[0].diagnostics)).toEqual([
      text,
    ]);
    expect(result.stdout).toMatch(/OperationOutcome\s+error\s+1\s+/);
    expect(result.stderr).toContain(`  error: ${text}`);
  });

  it('kicks off asynchronously, shows progress, and downloads the NDJSON outputs with the token', async () => {
    const bulk = await startBulkServer({ polls: 2 });
    try {
      const out = join(home.home, 'export-1');
      const result = await hearth(
        [
          'export',
          '--type',
          'Patient,Observation',
          '--since',
          '2023-01-01T00:00:00Z',
          '--output',
          out,
          '--poll-interval',
          '0.05',
        ],
        bulk.url,
      );
      expect(result.stderr).not.toContain('Error');
      expect(result.code).toBe(0);
      const kickOff = bulk.requests.find((r) => r.url.includes('$export'));
      expect(kickOff?.prefer).toBe('respond-async');
      expect(kickOff?.url).toBe('/fhir/R4/$export?_type=Patient%2CObservation&_since=2023-01-01T00%3A00%3A00Z');
      expect(result.stderr).toContain('Export started; status: ');
      expect(result.stderr).toContain('export: 40% exporting');
      expect(result.stderr).toContain('export: 80% exporting');
      expect(readFileSync(join(out, 'Patient.ndjson'), 'utf8').trim().split('\n')).toHaveLength(2);
      expect(readFileSync(join(out, 'Observation.ndjson'), 'utf8')).toContain('"o1"');
      expect(readFileSync(join(out, 'Observation.2.ndjson'), 'utf8')).toContain('"o2"');
      expect(readFileSync(join(out, 'OperationOutcome.errors.ndjson'), 'utf8')).toContain('processing');
      expect(result.stderr).toContain('The server reported errors in 1 file(s)');
      expect(result.stderr).toContain('  error: processing');
      expect(result.stdout).toMatch(/Patient\s+output\s+2\s+/);
      expect(result.stdout).toMatch(/Observation\s+output\s+1\s+.*Observation\.2\.ndjson/);
      expect(result.stderr).toContain('Exported 4 resources in 3 files');
      expect(
        bulk.requests.filter((r) => r.url.startsWith('/files/')).every((r) => r.authorization === `Bearer ${TOKEN}`),
      ).toBe(true);
    } finally {
      await bulk.close();
    }
  });

  it('exports at Patient and Group level; --no-wait prints the status URL and --status-url continues', async () => {
    const bulk = await startBulkServer({ polls: 0 });
    try {
      const started = await hearth(['export', '--patient', '--no-wait'], bulk.url);
      expect(started.code).toBe(0);
      expect(started.stdout.trim()).toBe(`${bulk.url}fhir/R4/bulkstatus/7`);
      expect(bulk.requests.some((r) => r.url === '/fhir/R4/Patient/$export')).toBe(true);
      const out = join(home.home, 'export-2');
      const finished = await hearth(['export', '--status-url', started.stdout.trim(), '--output', out], bulk.url);
      expect(finished.code).toBe(0);
      expect(readFileSync(join(out, 'Patient.ndjson'), 'utf8')).toContain('"a"');
      const group = await hearth(['export', '--group', 'g1', '--no-wait'], bulk.url);
      expect(group.code).toBe(0);
      expect(bulk.requests.some((r) => r.url === '/fhir/R4/Group/g1/$export')).toBe(true);
    } finally {
      await bulk.close();
    }
  });

  it('exit code 2 when the CapabilityStatement lists no $export or the kick-off finds no route', async () => {
    const unlisted = await startBulkServer({ listed: false });
    const noRoute = await startBulkServer({ kickOffStatus: 404 });
    try {
      const a = await hearth(['export'], unlisted.url);
      expect(a.code).toBe(2);
      expect(a.stderr).toContain('its CapabilityStatement lists no $export operation');
      expect(unlisted.requests.some((r) => r.url.includes('$export'))).toBe(false);
      const b = await hearth(['export', '--patient'], noRoute.url);
      expect(b.code).toBe(2);
      expect(b.stderr).toContain('Bulk export ($export) is not available on this server: HTTP 404');
    } finally {
      await unlisted.close();
      await noRoute.close();
    }
  });

  it('reports a failed export job with its outcome (exit code 1)', async () => {
    const bulk = await startBulkServer({ failJob: true });
    try {
      const result = await hearth(['export', '--output', join(home.home, 'export-3')], bulk.url);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('The export failed: HTTP 500: Export job crashed');
    } finally {
      await bulk.close();
    }
  });

  it('cancels the export on the server on Ctrl-C', async () => {
    const bulk = await startBulkServer({ endless: true });
    try {
      const child = startCli(['export', '--poll-interval', '0.05'], {
        home: home.home,
        env: { HEARTH_BASE_URL: bulk.url, HEARTH_ACCESS_TOKEN: TOKEN },
      });
      await waitForStderr(child, /export: \d+% exporting/);
      child.kill('SIGINT');
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(130);
      expect(bulk.requests.some((r) => r.method === 'DELETE' && r.url === '/fhir/R4/bulkstatus/7')).toBe(true);
    } finally {
      await bulk.close();
    }
  });
});
