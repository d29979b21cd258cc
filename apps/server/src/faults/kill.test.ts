// kill -9 of the built server process while 16 clients create, update and post 100-entry
// transactions, five times at moments drawn from a printed seed (HEARTH_FAULT_SEED=<seed> replays
// them): after each kill a new process on the same database shows every write that was answered
// 2xx, with the content sent, and every transaction wholly or not at all.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import {
  buildServerBundle,
  signInOverHttp,
  startServerProcess,
  type ServerBundle,
  type ServerProcess,
} from '../test/process.js';
import { seededRandom, WriteLoad, type LoadTarget } from '../test/write-load.js';

const ADMIN = { email: 'kill-test@example.com', password: `pw-${randomBytes(8).toString('hex')}` };
const ROUNDS = 5;
/** Writes acknowledged in a round before its kill may come (so that there is load to interrupt). */
const WARM_UP_ACKS = 20;
/** The kill comes up to this long after the warm-up. */
const MAX_KILL_DELAY_MS = 3000;

const cleanups: (() => Promise<void> | void)[] = [];
let bundle: ServerBundle | undefined;
let db: TestDatabase;

beforeAll(async () => {
  bundle = await buildServerBundle('kill');
  db = await createTestDatabase();
  cleanups.push(() => db.drop());
}, 180_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) {
    await cleanup();
  }
  bundle?.remove();
});

async function start(): Promise<{ server: ServerProcess; target: LoadTarget }> {
  const server = await startServerProcess(
    (bundle as ServerBundle).main,
    {
      DATABASE_URL: db.url,
      HEARTH_ADMIN_EMAIL: ADMIN.email,
      HEARTH_ADMIN_PASSWORD: ADMIN.password,
      // 16 clients write faster than the production per-user limit; the limiter still runs.
      HEARTH_RATE_LIMIT_REQUESTS_PER_MINUTE: '1000000',
      HEARTH_RATE_LIMIT_IP_REQUESTS_PER_MINUTE: '1000000',
    },
    cleanups,
  );
  const token = await signInOverHttp(server.baseUrl, ADMIN);
  return { server, target: { baseUrl: server.baseUrl, headers: { authorization: `Bearer ${token}` } } };
}

describe('kill -9 under load', () => {
  it(`loses no acknowledged write and shows no partial transaction, ${ROUNDS} kills at random moments`, async () => {
    const seed = Number(process.env.HEARTH_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`kill test: seed ${seed} (HEARTH_FAULT_SEED=${seed} replays the kill moments)`);
    const killMoments = seededRandom(seed);
    const load = new WriteLoad({
      clients: 16,
      transactionSize: 100,
      random: seededRandom(seed + 1),
      requestTimeoutMs: 60_000,
    });
    let { server, target } = await start();
    onTestFailed(() => console.log(`output of the last server process:\n${server.output()}`));
    for (let round = 1; round <= ROUNDS; round++) {
      load.setTarget(target);
      load.start();
      await load.acknowledgedMore(WARM_UP_ACKS);
      const delay = Math.floor(killMoments() * MAX_KILL_DELAY_MS);
      await new Promise((resolve) => setTimeout(resolve, delay));
      server.proc.kill('SIGKILL');
      expect((await server.exited).signal).toBe('SIGKILL');
      await load.stop();
      const { statuses, violations } = load.report();
      load.resetReport();
      console.log(
        `kill test round ${round}: killed ${delay} ms after ${WARM_UP_ACKS} acknowledgements; ${JSON.stringify(statuses)}`,
      );
      expect(violations).toEqual([]);

      // A new process on the same database: everything acknowledged in every round so far is there.
      ({ server, target } = await start());
      const verified = await load.verify(target);
      console.log(
        `kill test round ${round}: verified ${verified.patients} patients, ${verified.transactions} transactions (and ${verified.unanswered} unanswered, whole or absent)`,
      );
      expect(verified.problems).toEqual([]);
    }
  }, 600_000);
});
