// The server refuses to start without the node flag the bot sandbox needs, and says how to start it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { buildServerBundle, startServerProcess, type ServerBundle } from '../test/process.js';
import { assertNodeFlags, givenNodeFlags, missingNodeFlagProblem, NO_NODE_SNAPSHOT } from './node-flags.js';

describe('missingNodeFlagProblem', () => {
  it('accepts the flag on the command line or in NODE_OPTIONS, in either spelling', () => {
    expect(missingNodeFlagProblem(givenNodeFlags(['--no-node-snapshot'], ''), '20.19.0')).toBeUndefined();
    expect(missingNodeFlagProblem(givenNodeFlags(['--no_node_snapshot'], ''), '22.1.0')).toBeUndefined();
    expect(
      missingNodeFlagProblem(givenNodeFlags([], '--max-old-space-size=512  --no-node-snapshot'), '24.0.0'),
    ).toBeUndefined();
  });

  it('names the flag and the ways to start the server when it is missing on Node 20 and newer', () => {
    for (const version of ['20.19.0', '22.12.0', '24.3.0']) {
      const problem = missingNodeFlagProblem(givenNodeFlags(['--enable-source-maps'], '--trace-warnings'), version);
      expect(problem).toContain('--no-node-snapshot');
      expect(problem).toContain('npm start');
      expect(problem).toContain('node --no-node-snapshot apps/server/dist/main.js');
      expect(problem).toContain('NODE_OPTIONS=--no-node-snapshot');
    }
    expect(() => assertNodeFlags([], '20.19.0')).toThrow(/--no-node-snapshot/);
  });

  it('asks nothing of Node versions before 20 (no shared snapshot heap)', () => {
    expect(missingNodeFlagProblem([], '18.20.0')).toBeUndefined();
  });

  it('holds in the test workers, as vitest.config.ts starts them', () => {
    expect(missingNodeFlagProblem()).toBeUndefined();
  });
});

describe('the built server', () => {
  let bundle: ServerBundle | undefined;
  let db: TestDatabase;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    bundle = await buildServerBundle('node-flags');
    db = await createTestDatabase();
  }, 180_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    bundle?.remove();
    await db?.drop();
  });

  it('started without --no-node-snapshot exits at once with a message that says how to start it', async () => {
    const proc = spawn(process.execPath, [(bundle as ServerBundle).main], {
      // No database, no port: the check comes before anything starts.
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
    expect(code).toBe(1);
    expect(out).toContain('hearth cannot start');
    expect(out).toContain(`node ${NO_NODE_SNAPSHOT} apps/server/dist/main.js`);
    expect(out).not.toContain('starting hearth');
  });

  it('starts with the flag in NODE_OPTIONS (and with it on the command line: test/process.ts)', async () => {
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const server = await startServerProcess(
      (bundle as ServerBundle).main,
      {
        NODE_OPTIONS: NO_NODE_SNAPSHOT,
        DATABASE_URL: db.url,
        HEARTH_ADMIN_EMAIL: 'node-flags@example.com',
        HEARTH_ADMIN_PASSWORD: password,
      },
      cleanups,
      [],
    );
    expect((await fetch(`${server.baseUrl}healthcheck`)).status).toBe(200);
    server.proc.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
