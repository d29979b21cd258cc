import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { describeRequest } from './interaction.js';
import { traceIdsOf } from './telemetry.js';

/**
 * Fastify's request logging made cheap: one `info` line per request, written when its response is
 * done, with a few flat fields. Fastify's default (an "incoming request" line and a "request
 * completed" line, each serialising request or reply objects) cost a quarter of a read's CPU time.
 * The request id is bound by Fastify's per-request logger; Fastify's other log points are kept.
 * A FHIR request's line also names its interaction, resource type, operation, project and user.
 */
export class RequestLog extends LogController {
  /** `infoEnabled`: the logger's level lets `info` through; below it (HEARTH_LOG_LEVEL=warn) no fields are gathered. */
  constructor(private readonly infoEnabled: boolean) {
    super();
  }

  override incomingRequest(): void {
    // The completion line carries everything this one did.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!error && !this.infoEnabled) {
      return;
    }
    const fields = {
      method: request.method,
      url: urlWithoutQueryValues(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
      remoteAddress: request.ip,
      // FHIR requests: interaction, resourceType, operation, project, user (those that apply).
      ...describeRequest(request),
      // With traces exported: the request span's traceId and spanId.
      ...traceIdsOf(request.raw),
    };
    if (error) {
      // The response could not be written out (a socket error).
      reply.log.error({ ...fields, err: error }, 'request errored');
    } else {
      reply.log.info(fields, 'request');
    }
  }
}

/**
 * The URL with its query parameters' values left out: search values name patients (`?name=`,
 * `?birthdate=`, `?identifier=`) and a few flows carry codes or tokens, none of which belong in logs.
 * The parameter names stay, so one search can still be told from another.
 */
export function urlWithoutQueryValues(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) {
    return url;
  }
  const names: string[] = [];
  for (const part of url.slice(q + 1).split('&')) {
    if (part) {
      const eq = part.indexOf('=');
      names.push(eq < 0 ? part : `${part.slice(0, eq)}=`);
    }
  }
  return `${url.slice(0, q)}?${names.join('&')}`;
}
