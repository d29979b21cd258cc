// Binary content in and out: hl7.org/fhir/R4/binary.html#rest
import { Readable, Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, fail, type Resource } from '@hearth/core';
import type { BinaryStore } from '../../storage/binary-store.js';
import type { ReadResult } from '../../storage/types.js';
import { FHIR_JSON } from '../../operations/result.js';
import { storageKeyOf, withStorageKey } from '../../storage/binary-key.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Prepares a Binary given as a FHIR resource for storage: its base64 `data` goes to the binary
 * store and the row keeps contentType, securityContext and the content's key. A storage key sent
 * by the client is never trusted.
 */
export async function storeBinaryResource(
  store: BinaryStore,
  resource: Resource,
): Promise<{ resource: Resource; key?: string }> {
  const { data, ...rest } = resource as Resource & { data?: unknown };
  if (data === undefined) {
    return { resource: withStorageKey(rest as Resource, undefined) };
  }
  if (typeof data !== 'string') {
    fail(badRequest('Binary.data must be a base64 string', 'Binary.data'));
  }
  const compact = data.replace(/\s+/g, '');
  if (compact.length % 4 === 1 || !BASE64.test(compact)) {
    fail(badRequest('Binary.data is not valid base64', 'Binary.data'));
  }
  const { key } = await store.write(Buffer.from(compact, 'base64'));
  return { resource: withStorageKey(rest as Resource, key), key };
}

/** A stored Binary as a FHIR resource with its content in base64 `data`, streamed (hl7.org/fhir/R4/binary.html). */
export async function sendBinaryAsResource(
  reply: FastifyReply,
  store: BinaryStore,
  result: ReadResult,
): Promise<FastifyReply> {
  const key = storageKeyOf(result.resource);
  const resource = withStorageKey(result.resource, undefined) as Resource & { data?: string };
  if (!key) {
    return reply.code(200).header('content-type', FHIR_JSON).send(JSON.stringify(resource));
  }
  const { stream } = await store.open(key);
  const marker = '\u0000hearth-binary-data\u0000';
  const [head, tail] = JSON.stringify({ ...resource, data: marker }).split(JSON.stringify(marker));
  const body = Readable.from(
    (async function* () {
      yield head + '"';
      yield* stream.pipe(base64Encoder());
      yield '"' + tail;
    })(),
  );
  return reply.code(200).header('content-type', FHIR_JSON).send(body);
}

/** A stored Binary's raw bytes with its own Content-Type. */
export async function sendBinaryContent(
  reply: FastifyReply,
  store: BinaryStore,
  resource: Resource & { contentType?: string; securityContext?: { reference?: string } },
): Promise<FastifyReply> {
  const contentType = resource.contentType ?? 'application/octet-stream';
  // Stored content is the uploader's: never let a browser run it as part of this origin.
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', "sandbox; default-src 'none'");
  if (resource.securityContext?.reference) {
    reply.header('x-security-context', resource.securityContext.reference);
  }
  const key = storageKeyOf(resource);
  if (!key) {
    const inline = (resource as { data?: unknown }).data;
    const bytes = typeof inline === 'string' ? Buffer.from(inline, 'base64') : Buffer.alloc(0);
    return reply.code(200).header('content-type', contentType).send(bytes);
  }
  const { stream, size } = await store.open(key);
  return reply.code(200).header('content-type', contentType).header('content-length', String(size)).send(stream);
}

/** Base64 of a byte stream, chunk by chunk (a remainder of 1-2 bytes waits for the next chunk). */
function base64Encoder(): Transform {
  let rest: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const all = rest.length ? Buffer.concat([rest, chunk]) : chunk;
      const usable = all.length - (all.length % 3);
      rest = all.subarray(usable);
      done(null, all.subarray(0, usable).toString('base64'));
    },
    flush(done) {
      done(null, rest.length ? rest.toString('base64') : undefined);
    },
  });
}

/**
 * Binary reads answer with the resource when the client asks for FHIR JSON (Accept or _format)
 * ahead of the content's own type, and with the raw bytes otherwise.
 */
export function wantsFhirResource(request: FastifyRequest, contentType: string | undefined): boolean {
  const format = (request.query as Record<string, unknown>)._format;
  if (typeof format === 'string' && /json/i.test(format)) {
    return true;
  }
  const accept = request.headers.accept;
  if (!accept) {
    return false;
  }
  const stored = (contentType ?? 'application/octet-stream').split(';')[0].trim().toLowerCase();
  let fhirQ = 0;
  let rawQ = 0;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) {
      continue;
    }
    if (type === 'application/fhir+json' || type === 'application/json+fhir') {
      fhirQ = Math.max(fhirQ, q);
    } else if (type === stored || type === '*/*' || (type.endsWith('/*') && stored.startsWith(type.slice(0, -1)))) {
      rawQ = Math.max(rawQ, q);
    }
  }
  return fhirQ > 0 && fhirQ >= rawQ;
}
