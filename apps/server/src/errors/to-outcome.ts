import {
  badRequest,
  OperationOutcomeError,
  payloadTooLarge,
  serverError,
  serviceUnavailable,
  unsupportedMediaType,
  methodNotAllowed,
  type OperationOutcome,
} from '@hearth/core';
import { isConnectionError, pgErrorCode, PG_QUERY_CANCELED } from '../platform/postgres.js';

export interface MappedError {
  status: number;
  outcome: OperationOutcome;
  /** Unexpected errors are logged with their stack; user errors are not. */
  unexpected: boolean;
  /** When the same request may succeed later: the Retry-After header, in seconds. */
  retryAfterSeconds?: number;
}

/** What a client is told to wait while PostgreSQL is unreachable (a restart takes seconds). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** The one place where anything thrown becomes an HTTP status and an OperationOutcome. */
export function errorToOutcome(err: unknown): MappedError {
  if (err instanceof OperationOutcomeError) {
    return { status: err.status, outcome: err.outcome, unexpected: err.status >= 500 };
  }
  const code = (err as { code?: string })?.code;
  const statusCode = (err as { statusCode?: number })?.statusCode;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        outcome: payloadTooLarge('Request body is larger than the server accepts'),
        unexpected: false,
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 415, outcome: unsupportedMediaType('Unsupported Content-Type'), unexpected: false };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, outcome: badRequest('Request body is empty'), unexpected: false };
    case 'FST_ERR_CTP_INVALID_TYPE':
      return { status: 415, outcome: unsupportedMediaType('Invalid Content-Type header'), unexpected: false };
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return { status: 400, outcome: badRequest('Malformed URL'), unexpected: false };
    case 'FST_ERR_NOT_FOUND':
      return { status: 405, outcome: methodNotAllowed(), unexpected: false };
  }
  if (isConnectionError(err)) {
    return {
      status: 503,
      outcome: serviceUnavailable('The database is unavailable or busy; try again shortly'),
      unexpected: false,
      retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
    };
  }
  if (pgErrorCode(err) === PG_QUERY_CANCELED) {
    return {
      status: 503,
      outcome: serviceUnavailable('The request took longer than the server allows (statement timeout)'),
      unexpected: false,
    };
  }
  if (err instanceof SyntaxError || (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500)) {
    const message = err instanceof Error ? err.message : 'Bad request';
    return {
      status: statusCode && statusCode >= 400 && statusCode < 500 ? statusCode : 400,
      outcome: badRequest(message),
      unexpected: false,
    };
  }
  return { status: 500, outcome: serverError(err), unexpected: true };
}
