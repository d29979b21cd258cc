/**
 * hearth admin stats | projects | reindex | purge | migrate-status | migrate | set-password: the
 * super admin's maintenance of a whole server, over /admin/super/... (super admins only: anyone
 * else gets the server's 403). The reindex runs as an AsyncJob whose progress (resources done of
 * the total) is drawn as a bar while the command polls its status URL.
 */
import type { Command } from 'commander';
import {
  asyncJobProgress,
  formatDateTime,
  OperationOutcomeError,
  type OperationOutcome,
  type Project,
} from '@hearth/core';
import { connect, type CliClient, type GlobalOptions } from '../client.js';
import { readStdin } from '../input.js';
import {
  CliError,
  describeOutcome,
  EXIT_INTERRUPTED,
  EXIT_UNAVAILABLE,
  formatTable,
  info,
  isMissingRoute,
  printJson,
} from '../output.js';
import { createProgress, progressMode, type Progress } from '../progress.js';
import { ask, askHidden, isInteractive } from '../prompt.js';

/** Runs an /admin/super call; a server without it is told apart (exit code 2). */
async function superAdmin<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isMissingRoute(err)) {
      throw new CliError('Server administration (/admin/super) is not available on this server', EXIT_UNAVAILABLE);
    }
    throw err;
  }
}

/** The text of an informational OperationOutcome ('Purged 12 Login'). */
function outcomeText(outcome: OperationOutcome | undefined): string | undefined {
  return outcome?.issue?.find((i) => i.details?.text)?.details?.text;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** The answer of GET /admin/super/stats. */
interface Stats {
  databaseBytes: number | string;
  connections: number;
  pool: { total: number; idle: number; waiting: number };
  resources: Record<string, number>;
  migrations: { id: number; name: string; applied_at: string }[];
}

async function stats(hearth: CliClient, json: boolean): Promise<void> {
  const s = await superAdmin(() => hearth.get<Stats>('admin/super/stats', { cache: 'no-cache' }));
  if (json) {
    printJson(s);
    return;
  }
  const resources = Object.entries(s.resources).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const total = resources.reduce((sum, [, n]) => sum + n, 0);
  const last = s.migrations[s.migrations.length - 1];
  const rows: [string, string][] = [
    ['Database size', formatBytes(Number(s.databaseBytes))],
    ['Connections', String(s.connections)],
    ['Pool', `${s.pool.total} open, ${s.pool.idle} idle, ${s.pool.waiting} waiting (the answering process)`],
    ['Resources', String(total)],
    ['Migrations', last ? `${s.migrations.length} applied, the last ${last.id} (${last.name})` : 'none'],
  ];
  for (const [name, value] of rows) {
    console.log(`${`${name}:`.padEnd(15)}${value}`);
  }
  console.log(
    `\n${formatTable(
      ['type', 'resources'],
      resources.map(([type, n]) => [type, String(n)]),
    )}`,
  );
}

async function projects(hearth: CliClient, json: boolean): Promise<void> {
  const list = await superAdmin(() =>
    hearth.get<(Project & { memberCount?: number })[]>('admin/super/projects', { cache: 'no-cache' }),
  );
  if (json) {
    printJson(list);
    return;
  }
  console.log(
    formatTable(
      ['project', 'name', 'owner', 'members', 'updated'],
      list.map((p) => [
        p.id as string,
        `${p.name ?? ''}${p.superAdmin ? ' (super admin)' : ''}`,
        p.owner?.display ?? p.owner?.reference ?? '',
        String(p.memberCount ?? ''),
        formatDateTime(p.meta?.lastUpdated),
      ]),
    ),
  );
}

/** The answer of GET /admin/super/migrate. */
interface MigrationStatus {
  applied: { id: number; name: string; appliedAt: string }[];
  pending: { id: number; name: string }[];
  unknown: { id: number; name: string; appliedAt: string }[];
}

async function migrateStatus(hearth: CliClient, json: boolean): Promise<void> {
  const status = await superAdmin(() => hearth.get<MigrationStatus>('admin/super/migrate', { cache: 'no-cache' }));
  if (json) {
    printJson(status);
    return;
  }
  const rows = [
    ...status.applied.map((m) => [String(m.id), m.name, formatDateTime(m.appliedAt)]),
    ...status.unknown.map((m) => [String(m.id), m.name, `${formatDateTime(m.appliedAt)} (unknown to this server)`]),
    ...status.pending.map((m) => [String(m.id), m.name, 'pending']),
  ].sort((a, b) => Number(a[0]) - Number(b[0]));
  console.log(formatTable(['id', 'migration', 'applied'], rows));
  info(
    `\n${status.applied.length} applied, ${status.pending.length} pending` +
      (status.unknown.length ? `, ${status.unknown.length} from a newer server version` : '') +
      (status.pending.length ? ": apply them with 'hearth admin migrate' (or restart the server)" : ''),
  );
}

/** An AsyncJob as its status URL answers it. */
interface AsyncJob {
  resourceType: 'AsyncJob';
  status: string;
  extension?: { url: string; extension?: { url: string; valueInteger?: number; valueString?: string }[] }[];
  output?: { resourceType: string; parameter?: ReindexParameter[] };
}

interface ReindexParameter {
  name: string;
  valueInteger?: number;
  part?: { name: string; valueCode?: string; valueInteger?: number }[];
}

/** done / total and the message of a running job's progress extension. */
function progressOf(job: AsyncJob): { done: number; total: number; message: string } | undefined {
  const progress = asyncJobProgress(job);
  return progress?.done !== undefined && progress.total !== undefined
    ? { done: progress.done, total: progress.total, message: progress.message ?? '' }
    : undefined;
}

/** The per-type counts of a finished reindex (its output Parameters). */
export function reindexCounts(job: AsyncJob): { total: number; types: { resourceType: string; count: number }[] } {
  const parameter = job.output?.parameter ?? [];
  return {
    total: parameter.find((p) => p.name === 'total')?.valueInteger ?? 0,
    types: parameter
      .filter((p) => p.name === 'type')
      .map((p) => ({
        resourceType: p.part?.find((x) => x.name === 'resourceType')?.valueCode ?? '',
        count: p.part?.find((x) => x.name === 'count')?.valueInteger ?? 0,
      })),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface ReindexOptions {
  type?: string;
  progress: string;
  pollInterval: string;
  json?: boolean;
}

/** Starts the reindex job; returns its status URL. */
async function startReindex(hearth: CliClient, types: string | undefined): Promise<string> {
  const response = await superAdmin(() =>
    hearth.sendForResponse(
      'POST',
      'admin/super/reindex',
      { headers: { Prefer: 'respond-async' } },
      JSON.stringify(types ? { resourceType: types } : {}),
      'application/json',
    ),
  );
  const location = response.headers.get('content-location');
  await response.body?.cancel();
  if (response.status !== 202 || !location) {
    throw new CliError(`The server did not start the reindex as a job (HTTP ${response.status}, no status URL)`);
  }
  return new URL(location, hearth.getBaseUrl()).toString();
}

/** Polls the job until it ends, drawing done / total; returns the finished AsyncJob. */
async function waitForReindex(
  hearth: CliClient,
  statusUrl: string,
  progress: Progress,
  intervalMs: number,
  cancelled: () => boolean,
): Promise<AsyncJob> {
  for (;;) {
    if (cancelled()) {
      throw new CliError('Interrupted', EXIT_INTERRUPTED);
    }
    const response = await hearth.sendForResponse('GET', statusUrl, { headers: { Accept: 'application/fhir+json' } });
    const job = (await response.json()) as AsyncJob;
    if (response.status !== 202) {
      return job;
    }
    const state = progressOf(job);
    if (state) {
      progress.update({ value: state.done, total: state.total, detail: state.message.replace(/^\S+ resources /, '') });
    }
    await sleep(intervalMs);
  }
}

async function reindex(hearth: CliClient, options: ReindexOptions): Promise<void> {
  const mode = progressMode(options.progress);
  const interval = Math.max(0.05, Number(options.pollInterval) || 1) * 1000;
  const statusUrl = await startReindex(hearth, options.type);
  info(`Reindex started; status: ${statusUrl}`);
  let cancelled = false;
  const onSignal = () => {
    if (cancelled) process.exit(EXIT_INTERRUPTED);
    cancelled = true;
    info('\nCancelling the reindex...');
    // DELETE on the status URL cancels the job after its current batch.
    hearth
      .sendForResponse('DELETE', statusUrl)
      .catch(() => undefined)
      .finally(() => process.exit(EXIT_INTERRUPTED));
  };
  process.on('SIGINT', onSignal);
  const progress = createProgress(mode, 'reindex', 'resources');
  let job: AsyncJob;
  try {
    job = await waitForReindex(hearth, statusUrl, progress, interval, () => cancelled);
  } catch (err) {
    progress.stop();
    if (err instanceof OperationOutcomeError) {
      throw new CliError(`The reindex failed: ${describeOutcome(err)}`, 1, err.outcome);
    }
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
  }
  if (job.status !== 'completed') {
    progress.stop();
    throw new CliError(`The reindex ended with status '${job.status}'`);
  }
  const counts = reindexCounts(job);
  progress.update({ value: counts.total, total: counts.total, detail: 'done' });
  progress.stop();
  if (options.json) {
    printJson(counts);
    return;
  }
  console.log(
    formatTable(
      ['type', 'reindexed'],
      counts.types.map((t) => [t.resourceType, String(t.count)]),
    ),
  );
  info(`Reindexed ${counts.total} resources of ${counts.types.length} ${counts.types.length === 1 ? 'type' : 'types'}`);
}

/** A date the server takes (YYYY-MM-DD or a full instant). */
function parseBefore(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new CliError(`--before must be a date (2025-01-31) or an instant (2025-01-31T00:00:00Z), not '${value}'`);
  }
  return value;
}

async function purge(
  hearth: CliClient,
  resourceType: string,
  options: { before: string; yes?: boolean },
): Promise<void> {
  const before = parseBefore(options.before);
  if (!options.yes) {
    if (!isInteractive()) {
      throw new CliError('Purging deletes for good: confirm with --yes');
    }
    const answer = await ask(`Delete every ${resourceType} last updated before ${before}, for good? [y/N] `);
    if (!/^y(es)?$/i.test(answer)) {
      info('Nothing purged');
      return;
    }
  }
  const outcome = await superAdmin(() =>
    hearth.post<OperationOutcome>('admin/super/purge', { resourceType, before }, 'application/json'),
  );
  console.log(outcomeText(outcome) ?? 'Purged');
}

async function migrate(hearth: CliClient): Promise<void> {
  const outcome = await superAdmin(() => hearth.post<OperationOutcome>('admin/super/migrate', {}, 'application/json'));
  console.log(outcomeText(outcome) ?? 'Migrated');
}

/**
 * The new password: asked twice on a terminal (not echoed), else the first line of stdin. Never
 * an argument: arguments end up in shell history and process lists.
 */
async function newPassword(email: string, fromStdin: boolean): Promise<string> {
  if (fromStdin || !isInteractive()) {
    const line = (await readStdin()).toString('utf8').split(/\r?\n/)[0];
    if (!line) {
      throw new CliError('No password on stdin (give it as the first line)');
    }
    return line;
  }
  const first = await askHidden(`New password for ${email}: `);
  const again = await askHidden('Again: ');
  if (first !== again) {
    throw new CliError('The two passwords differ: nothing changed');
  }
  return first;
}

async function setPassword(
  hearth: CliClient,
  email: string,
  options: { project?: string; passwordStdin?: boolean },
): Promise<void> {
  const password = await newPassword(email, !!options.passwordStdin);
  await superAdmin(() =>
    hearth.post(
      'admin/super/setpassword',
      { email, password, ...(options.project ? { projectId: options.project } : {}) },
      'application/json',
    ),
  );
  console.log(`Password set for ${email}`);
}

export function registerAdminCommands(program: Command): void {
  const admin = program
    .command('admin')
    .description('Server administration for super admins: statistics, projects, reindex, purge, migrations, passwords');
  const session = async (command: Command) => (await connect(command.optsWithGlobals<GlobalOptions>())).hearth;

  admin
    .command('stats')
    .description('Database size, connections, resources per type and migrations (GET /admin/super/stats)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => stats(await session(command), !!options.json));

  admin
    .command('projects')
    .description('Every project on the server, with its owner and member count (GET /admin/super/projects)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => projects(await session(command), !!options.json));

  admin
    .command('reindex')
    .description(
      'Rewrite the search index (and terminology tables) of every resource, or of some types, in every project',
    )
    .addHelpText(
      'after',
      '\nRuns as a job on the server (POST /admin/super/reindex with Prefer: respond-async) and shows its\n' +
        'progress; Ctrl-C cancels the job after its current batch. Prints the resources reindexed per type.',
    )
    .option('--type <types>', 'resource types, comma-separated (default: all)')
    .option('--progress <mode>', 'auto (a bar on a terminal, lines otherwise), bar, lines or none', 'auto')
    .option('--poll-interval <seconds>', 'seconds between status polls', '1')
    .option('--json', 'print the counts as JSON')
    .action(async (options: ReindexOptions, command: Command) => reindex(await session(command), options));

  admin
    .command('purge')
    .description('Delete for good the sign-in records (Login) or AuditEvents last updated before a date')
    .argument('<resourceType>', 'Login or AuditEvent')
    .requiredOption('--before <date>', 'purge what was last updated before this date or instant')
    .option('--yes', 'do not ask for confirmation (needed when not on a terminal)')
    .action(async (resourceType: string, options: { before: string; yes?: boolean }, command: Command) =>
      purge(await session(command), resourceType, options),
    );

  admin
    .command('migrate-status')
    .description('Database migrations: applied (with dates), pending, and unknown to this server version')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) =>
      migrateStatus(await session(command), !!options.json),
    );

  admin
    .command('migrate')
    .description('Apply pending database migrations now (the server also applies them when it starts)')
    .action(async (_options, command: Command) => migrate(await session(command)));

  admin
    .command('set-password')
    .description("Set a user's password; asked for on a terminal, otherwise read from stdin's first line")
    .argument('<email>', "the user's email")
    .option('--project <id>', 'the project of a project-scoped user with this email')
    .option('--password-stdin', 'read the password from stdin even on a terminal')
    .action(async (email: string, options: { project?: string; passwordStdin?: boolean }, command: Command) =>
      setPassword(await session(command), email, options),
    );
}
