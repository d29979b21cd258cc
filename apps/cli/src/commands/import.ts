/** hearth import <files|dir...>: NDJSON and Bundle files into the server, in chunks, resumable. */
import type { Command } from 'commander';
import { connect, type GlobalOptions } from '../client.js';
import { CliError, EXIT_INTERRUPTED, ExitError, info } from '../output.js';
import { progressMode } from '../progress.js';
import { Importer } from '../import/run.js';

interface ImportCommandOptions extends GlobalOptions {
  batch?: boolean;
  chunkSize: string;
  concurrency: string;
  state?: string;
  restart?: boolean;
  failFast?: boolean;
  progress: string;
  retries: string;
}

function positiveInt(value: string, name: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new CliError(`${name} must be a whole number from 1 to ${max}`);
  }
  return n;
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .summary('Import NDJSON and Bundle files (chunked, resumable, with progress)')
    .description(
      'Import NDJSON files (one resource per line), Bundle files, single resources or arrays of them\n' +
        '(.ndjson, .jsonl, .json, optionally .gz; directories are searched). Resources with an id are\n' +
        'PUT (their ids kept), others POSTed, in transaction Bundles of --chunk-size entries (or batch\n' +
        'Bundles with --batch). A transaction Bundle file is sent whole. The progress of the import is\n' +
        'saved after every chunk: run the same command again to resume it, or to retry what failed.',
    )
    .argument('<paths...>', 'files or directories')
    .option('--batch', 'send batch Bundles (entries succeed or fail one by one) instead of transactions')
    .option('--chunk-size <n>', 'entries per Bundle', '100')
    .option('--concurrency <n>', 'Bundles in flight at once', '1')
    .option('--state <file>', 'the resume state file (default: ~/.hearth/imports/<id>.json)')
    .option('--restart', 'ignore the state of an earlier run and import everything again')
    .option('--fail-fast', 'stop at the first chunk that fails (the rest is left for the next run)')
    .option('--progress <mode>', 'auto (a bar on a terminal, lines otherwise), bar, lines or none', 'auto')
    .option('--retries <n>', 'retries of a chunk turned away for now (429, 503, no connection)', '3')
    .action(async (paths: string[], _options, command: Command) => {
      const options = command.optsWithGlobals<ImportCommandOptions>();
      let mode;
      try {
        mode = progressMode(options.progress);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
      const { hearth } = await connect(options);
      const importer = new Importer(hearth, {
        mode: options.batch ? 'batch' : 'transaction',
        batchSize: positiveInt(options.chunkSize, '--chunk-size', 10_000),
        concurrency: positiveInt(options.concurrency, '--concurrency', 16),
        statePath: options.state,
        restart: !!options.restart,
        failFast: !!options.failFast,
        progress: mode,
        retries: Number(options.retries) || 0,
        retryDelayMs: 1000,
      });
      let interrupts = 0;
      const onSignal = () => {
        interrupts++;
        if (interrupts > 1) {
          // The state is saved after every chunk: stopping now loses at most the chunks in flight.
          process.exit(EXIT_INTERRUPTED);
        }
        info('\nStopping after the chunks in flight (Ctrl-C again to stop at once)...');
        importer.stop();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const code = await importer.run(paths);
        if (code !== 0) {
          throw new ExitError(code);
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
