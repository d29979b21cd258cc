/**
 * The built CLI's FHIR commands against a running server: get/post/put/patch/delete (pretty JSON,
 * outcomes on stderr, exit codes), search as a table and JSON, and bots (create, save, deploy, run).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../server/src/test/app.js';
import { ensureCliBuilt, runCli, tempHome } from '../test/cli.test-util.js';

let t: TestApp;
let home: ReturnType<typeof tempHome>;
let dir: string;

beforeAll(async () => {
  await ensureCliBuilt();
  t = await createTestApp({ listen: true });
  home = tempHome();
  dir = join(home.home, 'files');
  mkdirSync(dir);
  // A stored login: the commands below use the profile (the test project's admin: bots need one).
  const { email, password } = t.testProject;
  const login = await hearth(['login', '--email', email, '--password', password]);
  expect(login.code).toBe(0);
});
afterAll(async () => {
  await t?.close();
  home?.remove();
});

function hearth(args: string[], input?: string) {
  return runCli(args, { home: home.home, env: { HEARTH_BASE_URL: t.baseUrl }, input });
}

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('hearth get | post | put | patch | delete', () => {
  it('creates, reads, updates, patches and deletes, printing pretty JSON', async () => {
    const created = await hearth([
      'post',
      'Patient',
      file('p.json', { resourceType: 'Patient', name: [{ family: 'Crud' }] }),
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('\n  "resourceType": "Patient"');
    const patient = JSON.parse(created.stdout);
    expect(patient.id).toBeTruthy();

    const read = await hearth(['get', `Patient/${patient.id}`]);
    expect(read.code).toBe(0);
    expect(JSON.parse(read.stdout).name[0].family).toBe('Crud');

    const updated = await hearth(
      ['put', `Patient/${patient.id}`, '-'],
      JSON.stringify({ ...patient, gender: 'female' }),
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout).meta.versionId).not.toBe(patient.meta.versionId);

    const patched = await hearth([
      'patch',
      `/Patient/${patient.id}`,
      '[{"op":"add","path":"/birthDate","value":"1990-02-03"}]',
    ]);
    expect(patched.code).toBe(0);
    expect(JSON.parse(patched.stdout).birthDate).toBe('1990-02-03');

    const history = await hearth(['get', `Patient/${patient.id}/_history`]);
    expect(JSON.parse(history.stdout).entry).toHaveLength(3);

    const deleted = await hearth(['delete', `Patient/${patient.id}`]);
    expect(deleted.code).toBe(0);
    const gone = await hearth(['get', `Patient/${patient.id}`]);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toBe('');
    const outcome = JSON.parse(gone.stderr);
    expect(outcome.resourceType).toBe('OperationOutcome');
  });

  it('exits non-zero with the OperationOutcome on stderr for errors', async () => {
    const missing = await hearth(['get', 'Patient/does-not-exist']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).issue[0].code).toBe('not-found');

    const invalid = await hearth(['post', 'Patient', '{"resourceType":"Patient","birthDate":"yesterday"}']);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stderr).issue[0].expression?.join(' ') ?? '').toContain('birthDate');

    const notJson = await hearth(['post', 'Patient', file('bad.json', '{ nope')]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('bad.json is not valid JSON');

    const noFile = await hearth(['post', 'Patient', join(dir, 'missing.json')]);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toContain('No such file');

    const noBody = await hearth(['put', 'Patient/x']);
    expect(noBody.code).toBe(1);
    expect(noBody.stderr).toContain('put needs a body');
  });

  it('reaches platform paths and sends extra headers', async () => {
    const me = await hearth(['get', 'auth/me']);
    expect(me.code).toBe(0);
    expect(JSON.parse(me.stdout).project.id).toBe(t.testProject.projectId);
    const conditional = await hearth([
      'post',
      'Patient',
      '{"resourceType":"Patient","identifier":[{"system":"urn:cli","value":"once"}]}',
      '-H',
      'If-None-Exist: identifier=urn:cli|once',
    ]);
    const again = await hearth([
      'post',
      'Patient',
      '{"resourceType":"Patient","identifier":[{"system":"urn:cli","value":"once"}]}',
      '--header',
      'If-None-Exist: identifier=urn:cli|once',
    ]);
    expect(JSON.parse(again.stdout).id).toBe(JSON.parse(conditional.stdout).id);
  });
});

describe('hearth search', () => {
  beforeAll(async () => {
    for (const given of ['Ann', 'Bob', 'Cy']) {
      await hearth([
        'post',
        'Patient',
        JSON.stringify({ resourceType: 'Patient', name: [{ given: [given], family: 'Tabular' }] }),
      ]);
    }
  });

  it('prints a table of id, lastUpdated and display', async () => {
    const result = await hearth(['search', 'Patient', 'family=Tabular', '_sort=given']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^id\s+lastUpdated\s+display$/);
    expect(lines[1]).toMatch(/^-+\s+-+\s+-+$/);
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/)[2])).toEqual(['Ann Tabular', 'Bob Tabular', 'Cy Tabular']);
    expect(lines[2]).toMatch(/^\S+\s+\d{4}-\d\d-\d\dT\S+\s+Ann Tabular$/);
    expect(result.stderr).toContain('3 Patient');
  });

  it('prints the Bundle with --json, resources with --ndjson, and every page with --all', async () => {
    const json = await hearth(['search', 'Patient', 'family=Tabular', '--json']);
    const bundle = JSON.parse(json.stdout);
    expect(bundle.resourceType).toBe('Bundle');
    expect(bundle.entry).toHaveLength(3);
    const ndjson = await hearth(['search', 'Patient', 'family=Tabular&_count=3', '--ndjson']);
    expect(
      ndjson.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).resourceType),
    ).toEqual(['Patient', 'Patient', 'Patient']);
    const paged = await hearth(['search', 'Patient', 'family=Tabular', '_count=2']);
    expect(paged.stdout.trim().split('\n')).toHaveLength(4);
    expect(paged.stderr).toContain('more: add --all');
    const all = await hearth(['search', 'Patient', 'family=Tabular', '_count=2', '--all']);
    expect(all.stdout.trim().split('\n')).toHaveLength(5);
    const allJson = await hearth(['search', 'Patient', 'family=Tabular', '_count=2', '--all', '--json']);
    expect(JSON.parse(allJson.stdout).entry).toHaveLength(3);
  });

  it('fails with the outcome for a bad search', async () => {
    const result = await hearth(['search', 'Patient', 'birthdate=notadate']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Error: HTTP 400: .*birthdate/i);
    const json = await hearth(['search', 'Patient', 'birthdate=notadate', '--json']);
    expect(JSON.parse(json.stderr).resourceType).toBe('OperationOutcome');
  });
});

describe('hearth bot', () => {
  const source = `
    export async function handler(_client: unknown, event: { input: unknown; contentType: string }): Promise<unknown> {
      return { version: 1, got: event.input, type: event.contentType };
    }
  `;

  it('creates a bot with its source, deploys it, and runs it with input from a file and stdin', async () => {
    const created = await hearth(['bot', 'create', 'CLI echo bot', file('echo.ts', source), '--deploy']);
    expect(created.stderr).toContain('Deployed Bot/');
    expect(created.code).toBe(0);
    const bot = JSON.parse(created.stdout);
    expect(bot.resourceType).toBe('Bot');
    expect(bot.sourceCode.title).toBe('echo.ts');

    const fromFile = await hearth(['bot', 'run', bot.id, file('input.json', { hello: 'world' })]);
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toEqual({ version: 1, got: { hello: 'world' }, type: 'application/json' });

    const fromStdin = await hearth(['bot', 'run', bot.id, '-', '--content-type', 'text/plain'], 'plain text in');
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ got: 'plain text in', type: 'text/plain' });

    // A new version: save, then deploy from the saved source.
    const saved = await hearth(['bot', 'save', bot.id, file('echo2.ts', source.replace('version: 1', 'version: 2'))]);
    expect(saved.code).toBe(0);
    expect(saved.stdout).toContain(`Bot/${bot.id}`);
    const deployed = await hearth(['bot', 'deploy', bot.id]);
    expect(deployed.code).toBe(0);
    const second = await hearth(['bot', 'run', bot.id, '{"n":2}']);
    expect(JSON.parse(second.stdout)).toMatchObject({ version: 2, got: { n: 2 } });

    // Deploy with a file: saved and deployed in one go.
    const third = await hearth(['bot', 'deploy', bot.id, file('echo3.ts', source.replace('version: 1', 'version: 3'))]);
    expect(third.code).toBe(0);
    expect(JSON.parse((await hearth(['bot', 'run', bot.id])).stdout)).toMatchObject({ version: 3 });

    // By identifier (Bot/$execute?identifier=system|value).
    await hearth([
      'patch',
      `Bot/${bot.id}`,
      '[{"op":"add","path":"/identifier","value":[{"system":"urn:cli","value":"echo"}]}]',
    ]);
    const byIdentifier = await hearth(['bot', 'run', '--identifier', 'urn:cli|echo', '{"by":"identifier"}']);
    expect(byIdentifier.code).toBe(0);
    expect(JSON.parse(byIdentifier.stdout)).toMatchObject({ got: { by: 'identifier' } });
  });

  it('reports a failing bot and a bot without code', async () => {
    const created = await hearth([
      'bot',
      'create',
      'CLI failing bot',
      file('fail.ts', 'export async function handler() { throw new Error("bot says no"); }'),
      '--deploy',
    ]);
    const bot = JSON.parse(created.stdout);
    const run = await hearth(['bot', 'run', bot.id, '{}']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('bot says no');

    const empty = JSON.parse((await hearth(['bot', 'create', 'CLI empty bot'])).stdout);
    const deploy = await hearth(['bot', 'deploy', empty.id]);
    expect(deploy.code).toBe(1);
    expect(deploy.stderr).toContain('sourceCode');
  });
});
