import type { FastifyInstance } from 'fastify';
import type { Pool } from '../platform/postgres.js';
import { HEARTH_VERSION } from '../version.js';

/** GET /healthcheck: is the process up and can it reach PostgreSQL. */
export async function healthPlugin(app: FastifyInstance, opts: { pool: Pool }): Promise<void> {
  app.get('/healthcheck', async (_request, reply) => {
    let postgres = false;
    try {
      await opts.pool.query('SELECT 1');
      postgres = true;
    } catch {
      postgres = false;
    }
    return reply.code(postgres ? 200 : 503).send({ ok: postgres, version: HEARTH_VERSION, postgres });
  });
}
