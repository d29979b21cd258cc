/** A throwaway redis-server for tests of the Redis paths (rate limits, websocket messages across processes). */
import { spawn, spawnSync } from 'node:child_process';
import { getFreePort } from './app.js';
import { commandRuns, requiredForSuite } from './required.js';

/** Whether the Redis suites run: redis-server is installed; missing, they skip locally and fail under CI. */
export function redisForSuite(env: NodeJS.ProcessEnv = process.env): boolean {
  return requiredForSuite('redis-server', commandRuns('redis-server'), 'apt-get install -y redis-server', env);
}

export interface TestRedis {
  url: string;
  stop(): void;
}

/** Starts redis-server on a free loopback port, without persistence, and waits until it answers PING. */
export async function startTestRedis(): Promise<TestRedis> {
  const port = await getFreePort();
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const stop = (): void => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill();
  };
  const deadline = Date.now() + 30_000;
  while (
    !spawnSync('redis-cli', ['-p', String(port), 'ping'])
      .stdout?.toString()
      .includes('PONG')
  ) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      stop();
      throw new Error(`redis-server did not start on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}
