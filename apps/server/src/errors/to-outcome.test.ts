// The one error mapper: a database that cannot be reached is a 503 the client may retry, never a 500.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { errorToOutcome } from './to-outcome.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('errorToOutcome', () => {
  it.each([
    ['a pool past its acquire timeout', new Error('timeout exceeded when trying to connect')],
    ['a connection cut mid-query', new Error('Connection terminated unexpectedly')],
    ['a new connection that timed out', new Error('Connection terminated due to connection timeout')],
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a missing Unix socket (server stopped)', withCode('connect ENOENT /tmp/.s.PGSQL.5432', 'ENOENT')],
    ['an administrator shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['a server starting up', withCode('the database system is starting up', '57P03')],
    ['a connection exception', withCode('connection failure', '08006')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['a wrapped connection error', new Error('job queue failed', { cause: withCode('refused', 'ECONNREFUSED') })],
  ])('maps %s to 503 with Retry-After', (_name, err) => {
    const mapped = errorToOutcome(err);
    expect(mapped.status).toBe(503);
    expect(mapped.unexpected).toBe(false);
    expect(mapped.retryAfterSeconds).toBeGreaterThan(0);
    expect(mapped.outcome.issue[0].code).toBe('transient');
  });

  it('leaves errors of the statement itself alone', () => {
    expect(errorToOutcome(withCode('syntax error', '42601')).status).toBe(500);
    expect(errorToOutcome(new Error('boom')).retryAfterSeconds).toBeUndefined();
  });

  it('maps the error of a real pool that cannot connect', async () => {
    // Port 1 on loopback: nothing listens there.
    const pool = new pg.Pool({ connectionString: 'postgres://x@127.0.0.1:1/x', connectionTimeoutMillis: 2000 });
    pool.on('error', () => undefined);
    const err = await pool.query('SELECT 1').catch((e: unknown) => e);
    await pool.end();
    expect(errorToOutcome(err).status).toBe(503);
  });
});
