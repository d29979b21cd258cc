// What a client gets when Node's HTTP parser refuses its request before Fastify sees it (a request
// line and headers over Node's limit, a malformed request, a request that took too long): an
// OperationOutcome like every other error, instead of Fastify's own JSON.
import type { Socket } from 'node:net';
import { badRequest, payloadTooLarge, type OperationOutcome } from '@hearth/core';

interface ParserError extends Error {
  code?: string;
}

/** The status and outcome for a parser error. */
export function clientErrorOutcome(
  err: ParserError,
  maxHeaderBytes: number,
): { status: number; outcome: OperationOutcome } {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        outcome: {
          resourceType: 'OperationOutcome',
          id: 'request-timeout',
          issue: [{ severity: 'error', code: 'timeout', details: { text: 'The request was not received in time' } }],
        },
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        outcome: payloadTooLarge(
          `The request line and headers are larger than ${Math.round(maxHeaderBytes / 1024)} KB: ` +
            'send a long search as POST [type]/_search with its parameters in the body, or send fewer or smaller headers',
        ),
      };
    default:
      return { status: 400, outcome: badRequest('The request is not valid HTTP') };
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** Fastify's clientErrorHandler: answers with an OperationOutcome when the socket can still be written to. */
export function sendClientError(err: ParserError, socket: Socket, maxHeaderBytes: number): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) {
    return;
  }
  if (socket.writable) {
    const { status, outcome } = clientErrorOutcome(err, maxHeaderBytes);
    const body = JSON.stringify(outcome);
    socket.write(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nConnection: close\r\nContent-Type: application/fhir+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
