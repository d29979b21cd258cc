/**
 * hearth export: FHIR Bulk Data export (hl7.org/fhir/uv/bulkdata/export.html) at system, Patient
 * or Group level. Kick-off with `Prefer: respond-async`, poll the Content-Location status URL
 * (202 with X-Progress until done, honouring Retry-After), then download the NDJSON outputs.
 * A server without $export gets a clear message and exit code 2.
 */
import { createWriteStream, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { OperationOutcomeError } from '@hearth/core';
import { connect, type CliClient, type GlobalOptions } from '../client.js';
import {
  CliError,
  describeOutcome,
  EXIT_INTERRUPTED,
  EXIT_UNAVAILABLE,
  ExitError,
  formatTable,
  info,
  isNoRoute,
  statusOf,
} from '../output.js';

interface ExportOptions extends GlobalOptions {
  patient?: boolean;
  group?: string;
  type?: string;
  since?: string;
  typeFilter?: string;
  output?: string;
  statusUrl?: string;
  pollInterval: string;
  timeout: string;
  wait: boolean;
}

/** An output file of the manifest (hl7.org/fhir/uv/bulkdata/export.html#response---complete-status). */
interface ManifestFile {
  type: string;
  url: string;
  count?: number;
}

interface Manifest {
  transactionTime?: string;
  request?: string;
  requiresAccessToken?: boolean;
  output: ManifestFile[];
  error: ManifestFile[];
}

interface CapabilityOperation {
  name?: string;
  definition?: string;
}
interface CapabilityStatement {
  rest?: {
    mode?: string;
    operation?: CapabilityOperation[];
    resource?: { type?: string; operation?: CapabilityOperation[] }[];
  }[];
}

type Level = 'system' | 'Patient' | 'Group';

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function unavailable(detail: string): CliError {
  return new CliError(`Bulk export ($export) is not available on this server: ${detail}`, EXIT_UNAVAILABLE);
}

/** Whether the CapabilityStatement lists $export at this level; undefined when it cannot be read. */
export async function exportListed(hearth: CliClient, level: Level): Promise<boolean | undefined> {
  let statement: CapabilityStatement;
  try {
    statement = await hearth.get<CapabilityStatement>(hearth.fhirUrl('metadata'), { cache: 'no-cache' });
  } catch {
    return undefined;
  }
  const rest = statement.rest?.find((r) => r.mode === 'server') ?? statement.rest?.[0];
  const isExport = (o: CapabilityOperation) =>
    /export$/.test(o.name ?? '') || /\/OperationDefinition\/.*export$/.test(o.definition ?? '');
  const system = (rest?.operation ?? []).filter(isExport);
  if (level === 'system') {
    return system.some((o) => !/^(patient|group)-/.test(o.name ?? ''));
  }
  const typeLevel = rest?.resource?.find((r) => r.type === level)?.operation ?? [];
  return typeLevel.some(isExport) || system.some((o) => o.name === `${level.toLowerCase()}-export`);
}

function kickOffPath(options: ExportOptions): { level: Level; path: string } {
  if (options.patient && options.group) {
    throw new CliError('Choose one of --patient and --group');
  }
  if (options.group) {
    return { level: 'Group', path: `Group/${encodeURIComponent(options.group)}/$export` };
  }
  return options.patient ? { level: 'Patient', path: 'Patient/$export' } : { level: 'system', path: '$export' };
}

/** Starts the export; resolves with the status URL (or, from a server answering at once, the manifest). */
async function kickOff(hearth: CliClient, options: ExportOptions): Promise<string | Manifest> {
  const { level, path } = kickOffPath(options);
  if ((await exportListed(hearth, level)) === false) {
    throw unavailable(
      `its CapabilityStatement lists no ${level === 'system' ? '' : `${level}-level `}$export operation`,
    );
  }
  const query = new URLSearchParams();
  for (const [name, value] of [
    ['_type', options.type],
    ['_since', options.since],
    ['_typeFilter', options.typeFilter],
  ] as const) {
    if (value) {
      query.set(name, value);
    }
  }
  const url = hearth.fhirUrl(path) + (query.size ? `?${query}` : '');
  let response: Response;
  try {
    response = await hearth.sendForResponse('GET', url, {
      headers: { Accept: 'application/fhir+json', Prefer: 'respond-async' },
    });
  } catch (err) {
    // "No route for GET ...", "Operation $export is not supported ..." (not a missing Group: that is an error).
    if (isNoRoute(err) && (statusOf(err) !== 404 || /no route|operation|not supported/i.test((err as Error).message))) {
      throw unavailable(describeOutcome(err));
    }
    throw err;
  }
  if (response.status === 202) {
    await response.body?.cancel();
    const location = response.headers.get('content-location');
    if (!location) {
      throw new CliError('The server accepted the export but gave no Content-Location to poll');
    }
    return new URL(location, hearth.getBaseUrl()).toString();
  }
  return parseManifest(await response.json());
}

/** The manifest; also read from an AsyncJob whose output is a Parameters of output files. */
export function parseManifest(body: unknown): Manifest {
  const value = (body ?? {}) as Record<string, unknown>;
  if (Array.isArray(value.output)) {
    return {
      transactionTime: value.transactionTime as string | undefined,
      request: value.request as string | undefined,
      requiresAccessToken: value.requiresAccessToken as boolean | undefined,
      output: value.output as ManifestFile[],
      error: Array.isArray(value.error) ? (value.error as ManifestFile[]) : [],
    };
  }
  const parameters = (
    value.output as
      | {
          parameter?: {
            name: string;
            part?: {
              name: string;
              valueUri?: string;
              valueUrl?: string;
              valueCode?: string;
              valueString?: string;
              valueInteger?: number;
            }[];
          }[];
        }
      | undefined
  )?.parameter;
  if (value.resourceType === 'AsyncJob' && Array.isArray(parameters)) {
    const files = (name: string) =>
      parameters
        .filter((p) => p.name === name)
        .map((p) => {
          const part = (n: string) => p.part?.find((x) => x.name === n);
          return {
            type: part('type')?.valueCode ?? part('type')?.valueString ?? 'Resource',
            url: part('url')?.valueUri ?? part('url')?.valueUrl ?? part('url')?.valueString ?? '',
            count: part('count')?.valueInteger,
          };
        })
        .filter((f) => f.url);
    return {
      transactionTime: value.transactionTime as string | undefined,
      output: files('output'),
      error: files('error'),
    };
  }
  throw new CliError('The export finished, but its answer is not a bulk data manifest (no output list)');
}

/** Polls the status URL until the manifest comes, showing X-Progress. */
async function poll(
  hearth: CliClient,
  statusUrl: string,
  options: ExportOptions,
  cancelled: () => boolean,
): Promise<Manifest> {
  const started = Date.now();
  const deadline = started + Number(options.timeout) * 1000;
  const interval = Math.max(0.05, Number(options.pollInterval) || 2) * 1000;
  const tty = process.stderr.isTTY;
  let shown = '';
  for (;;) {
    if (cancelled()) {
      throw new ExitError(EXIT_INTERRUPTED);
    }
    const response = await hearth.sendForResponse('GET', statusUrl, { headers: { Accept: 'application/json' } });
    if (response.status !== 202) {
      if (tty && shown) {
        process.stderr.write('\n');
      }
      return parseManifest(await response.json());
    }
    await response.body?.cancel();
    const progress = response.headers.get('x-progress') ?? 'in progress';
    const line = `export: ${progress} (${Math.round((Date.now() - started) / 1000)}s)`;
    if (tty) {
      process.stderr.write(`\r\x1b[K${line}`);
      shown = line;
    } else if (progress !== shown) {
      info(line);
      shown = progress;
    }
    if (Date.now() > deadline) {
      throw new CliError(
        `The export is still running after ${options.timeout}s; continue with: hearth export --status-url '${statusUrl}'`,
      );
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    const wait = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 60_000) : interval;
    await sleep(Math.max(interval, wait));
  }
}

/** Streams one output file to disk (temp file, then rename); resolves with its line count. */
async function download(hearth: CliClient, file: ManifestFile, target: string, withToken: boolean): Promise<number> {
  const sameServer = new URL(file.url, hearth.getBaseUrl()).origin === new URL(hearth.getBaseUrl()).origin;
  const response = await hearth.sendForResponse('GET', file.url, {
    headers: { Accept: 'application/fhir+ndjson, application/ndjson, */*' },
    // The token goes only to this server, and only when the manifest says it is needed.
    noAuth: !(withToken && sameServer),
  });
  let lines = 0;
  let last = 10;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (const byte of chunk) {
        if (byte === 10) {
          lines++;
        }
      }
      last = chunk.length ? chunk[chunk.length - 1] : last;
      done(null, chunk);
    },
  });
  const temp = `${target}.part`;
  if (response.body) {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), counter, createWriteStream(temp));
  } else {
    await pipeline(Readable.from([]), createWriteStream(temp));
  }
  renameSync(temp, target);
  return lines + (last !== 10 ? 1 : 0);
}

/** Error lines shown on the terminal; the rest are in the files. */
const SHOWN_ERRORS = 10;

/** The issues of downloaded error files (NDJSON OperationOutcomes), one line each: `severity: diagnostics`. */
export function errorLines(files: string[]): string[] {
  const lines: string[] = [];
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) {
        continue;
      }
      let outcome: {
        issue?: { severity?: string; code?: string; diagnostics?: string; details?: { text?: string } }[];
      };
      try {
        outcome = JSON.parse(line) as typeof outcome;
      } catch {
        lines.push(`(not JSON) ${line.slice(0, 200)}`);
        continue;
      }
      for (const issue of outcome.issue ?? []) {
        lines.push(`${issue.severity ?? 'error'}: ${issue.diagnostics ?? issue.details?.text ?? issue.code ?? ''}`);
      }
    }
  }
  return lines;
}

/** Downloads every output (and error) file into the directory; one file per output, named by type. */
async function downloadAll(hearth: CliClient, manifest: Manifest, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const seen = new Map<string, number>();
  const rows: string[][] = [];
  const errorFiles: string[] = [];
  const files = [
    ...manifest.output.map((f) => ({ ...f, kind: 'output' })),
    ...manifest.error.map((f) => ({ ...f, kind: 'error' })),
  ];
  for (const file of files) {
    const base = file.kind === 'error' ? `${file.type}.errors` : file.type;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const name = `${base.replace(/[^A-Za-z0-9._-]/g, '_')}${n > 1 ? `.${n}` : ''}.ndjson`;
    const target = join(dir, name);
    const count = await download(hearth, file, target, manifest.requiresAccessToken !== false);
    if (file.kind === 'error') {
      errorFiles.push(target);
    }
    rows.push([file.type, file.kind, String(count), target]);
  }
  if (rows.length) {
    console.log(formatTable(['type', 'kind', 'resources', 'file'], rows));
  }
  const total = rows.filter((r) => r[1] === 'output').reduce((n, r) => n + Number(r[2]), 0);
  info(
    `Exported ${total} resources in ${manifest.output.length} files to ${dir}${manifest.transactionTime ? ` (as of ${manifest.transactionTime})` : ''}`,
  );
  if (manifest.error.length) {
    info(`The server reported errors in ${manifest.error.length} file(s): see the *.errors.ndjson files`);
    const lines = errorLines(errorFiles);
    for (const line of lines.slice(0, SHOWN_ERRORS)) {
      info(`  ${line}`);
    }
    if (lines.length > SHOWN_ERRORS) {
      info(`  ... and ${lines.length - SHOWN_ERRORS} more`);
    }
  }
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .summary('Bulk export ($export) to NDJSON files')
    .description(
      'Bulk Data export: the whole system (default), every patient (--patient) or a group (--group <id>).\n' +
        'Starts the export asynchronously, shows its progress, and downloads the NDJSON files.\n' +
        'Exit code 2 when the server has no $export.',
    )
    .option('--patient', 'Patient-level export (Patient/$export)')
    .option('--group <id>', 'Group-level export (Group/<id>/$export)')
    .option('--type <types>', 'resource types to export, comma-separated (_type)')
    .option('--since <instant>', 'only resources changed since this instant (_since)')
    .option('--type-filter <filters>', 'search filters per type (_typeFilter)')
    .option('-o, --output <dir>', 'directory for the files (default ./hearth-export-<time>)')
    .option('--status-url <url>', 'continue an export started earlier: poll this status URL')
    .option('--no-wait', 'start the export, print its status URL and exit')
    .option('--poll-interval <seconds>', "seconds between status polls (at least the server's Retry-After)", '2')
    .option('--timeout <seconds>', 'give up waiting after this long', '3600')
    .action(async (_options, command: Command) => {
      const options = command.optsWithGlobals<ExportOptions>();
      const { hearth } = await connect(options);
      let cancelled = false;
      let statusUrl = options.statusUrl;
      const onSignal = () => {
        if (cancelled) {
          process.exit(EXIT_INTERRUPTED);
        }
        cancelled = true;
        info('\nCancelling the export...');
        if (statusUrl) {
          // DELETE on the status URL cancels the export (bulk data spec, "Delete a Bulk Data Request").
          hearth
            .sendForResponse('DELETE', statusUrl)
            .catch(() => undefined)
            .finally(() => process.exit(EXIT_INTERRUPTED));
        } else {
          process.exit(EXIT_INTERRUPTED);
        }
      };
      process.on('SIGINT', onSignal);
      try {
        let manifest: Manifest | undefined;
        if (!statusUrl) {
          const started = await kickOff(hearth, options);
          if (typeof started === 'string') {
            statusUrl = started;
            info(`Export started; status: ${statusUrl}`);
          } else {
            manifest = started;
          }
        }
        if (!manifest && !options.wait) {
          console.log(statusUrl);
          return;
        }
        manifest ??= await poll(hearth, statusUrl as string, options, () => cancelled);
        const dir = resolve(options.output ?? `hearth-export-${new Date().toISOString().replace(/[:.]/g, '-')}`);
        await downloadAll(hearth, manifest, dir);
      } catch (err) {
        if (err instanceof OperationOutcomeError && statusUrl) {
          throw new CliError(`The export failed: ${describeOutcome(err)}`, 1, err.outcome);
        }
        throw err;
      } finally {
        process.off('SIGINT', onSignal);
      }
    });
}
