import { destination as pinoDestination, pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout (or `destination`, for tests). Secrets never reach the logger: auth headers
 * and tokens are redacted.
 *
 * Stdout is written asynchronously: a request no longer waits for a synchronous write(2) of its
 * log line (13% of the server's CPU under load, docs/performance.md). A line is handed to the
 * kernel at once when no write is in flight; under load the lines that arrive meanwhile go out
 * together in the next write. Nothing is lost at exit: pino writes what is still buffered
 * synchronously on `exit` (also after process.exit), and flushLogger() drains it on shutdown.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'hearth' },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'password',
          '*.password',
          'secret',
          '*.secret',
          'access_token',
          'refresh_token',
        ],
        censor: '***',
      },
    },
    // minLength 1 rather than the default 0: sonic-boom's flush(cb) with 0 calls back at once, even
    // while a write is still in flight; with 1 it calls back once that write is done (lines still
    // go out as soon as no write is in flight: any line is longer than one byte).
    destination ?? pinoDestination({ dest: 1, sync: false, minLength: 1 }),
  );
}

export type LogFormat = 'json' | 'pretty';

/**
 * HEARTH_LOG_FORMAT: `json` or `pretty`; empty chooses `pretty` for a developer (NODE_ENV not
 * production, stdout a terminal) and `json` for everyone else (a service manager, a container).
 */
export function logFormatOf(setting: string, env: NodeJS.ProcessEnv, stdoutIsTty: boolean): LogFormat {
  const value = setting.trim().toLowerCase();
  if (value === 'json' || value === 'pretty') {
    return value;
  }
  if (value !== '') {
    throw new Error(`Config logFormat (HEARTH_LOG_FORMAT) must be json or pretty, got "${setting}"`);
  }
  return env.NODE_ENV !== 'production' && stdoutIsTty ? 'pretty' : 'json';
}

/**
 * The destination of the `pretty` format: pino-pretty in this thread (a line a log call: time,
 * level, message, then the fields). Loaded only then: production never imports it.
 * Undefined for `json` (createLogger's asynchronous stdout).
 */
export async function logDestination(format: LogFormat): Promise<DestinationStream | undefined> {
  if (format === 'json') {
    return undefined;
  }
  const { default: pretty } = await import('pino-pretty');
  // Coloured when stdout is a terminal that takes colours (NO_COLOR respected); the fields after the message on the same line.
  return pretty({ singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', sync: true });
}

/** Waits until every line logged so far has been written out (before a deliberate exit). */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
