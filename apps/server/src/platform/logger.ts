import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout. Secrets never reach the logger: auth headers and tokens are redacted. */
export function createLogger(level: string): Logger {
  return pino({
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
  });
}
