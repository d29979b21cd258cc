import { describe, expect, it } from 'vitest';
import { BotSandbox, type SandboxRun } from './sandbox.js';

const code =
  'globalThis.__hearthModule = function (exports) { exports.handler = async (client, event) => event.n * 2; };';

function run(n: number, extra: Partial<SandboxRun> = {}): SandboxRun {
  return {
    poolKey: 'Bot/1',
    codeKey: 'v1',
    code,
    event: { n },
    host: async () => undefined,
    timeoutMs: 2000,
    fhirBase: 'http://localhost/fhir/R4/',
    baseUrl: 'http://localhost/',
    ...extra,
  };
}

describe('BotSandbox', () => {
  it('reuses warm isolates, and recycles each after 25 runs so memory stays flat', async () => {
    const sandbox = new BotSandbox({ memoryLimitMb: 32, warmIsolates: 4 });
    for (let i = 0; i < 60; i++) {
      const outcome = await sandbox.run(run(i));
      expect(outcome).toMatchObject({ ok: true, value: i * 2 });
    }
    // One run at a time: one isolate serves 25 runs, then a new one takes over.
    expect(sandbox.isolatesCreated).toBe(3);
    sandbox.dispose();
  });

  it('never shares an isolate between two runs at once, nor between two bots', async () => {
    const sandbox = new BotSandbox({ memoryLimitMb: 32, warmIsolates: 8 });
    await Promise.all([sandbox.run(run(1)), sandbox.run(run(2)), sandbox.run(run(3, { poolKey: 'Bot/2' }))]);
    expect(sandbox.isolatesCreated).toBe(3);
    await sandbox.run(run(4, { poolKey: 'Bot/2' }));
    expect(sandbox.isolatesCreated).toBe(3);
    sandbox.dispose();
  });

  it('keeps console output and answers host calls', async () => {
    const sandbox = new BotSandbox({ memoryLimitMb: 32, warmIsolates: 0 });
    const outcome = await sandbox.run(
      run(0, {
        code: `globalThis.__hearthModule = function (exports) {
          exports.handler = async (client) => { console.log('reading', 1); const p = await client.readResource('Patient', 'x'); console.error('done'); return p.id; };
        };`,
        host: async (method, args) => ({ resourceType: 'Patient', id: `${method}:${String(args[1])}` }),
      }),
    );
    expect(outcome).toMatchObject({ ok: true, value: 'read:x' });
    expect(outcome.logs).toEqual([
      { level: 'info', message: 'reading 1' },
      { level: 'error', message: 'done' },
    ]);
  });
});
