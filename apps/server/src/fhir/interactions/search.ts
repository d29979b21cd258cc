// hl7.org/fhir/R4/http.html#search: type, system and compartment searches, by GET or POST _search.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, unsupportedMediaType } from '@hearth/core';
import { ctx, rawQuery } from '../context.js';
import { sendJsonText } from '../../http/fhir-reply.js';
import { formPairs } from '../../http/body.js';
import type { SearchService } from '../../search/service.js';

export async function searchInteraction(
  request: FastifyRequest,
  reply: FastifyReply,
  search: SearchService,
  resourceType?: string,
  compartment?: { resourceType: string; id: string },
): Promise<FastifyReply> {
  const { repo, fhirBase } = ctx(request);
  if (resourceType) {
    repo.assertType(resourceType);
  }
  const params = new URLSearchParams(rawQuery(request));
  if (request.method === 'POST' && request.body !== undefined && request.body !== null) {
    // POST _search carries its parameters form-encoded (hl7.org/fhir/R4/http.html#search).
    const form = /^application\/x-www-form-urlencoded/i.test(String(request.headers['content-type'] ?? ''));
    if (!form || typeof request.body !== 'object' || Buffer.isBuffer(request.body)) {
      fail(unsupportedMediaType('POST _search takes its parameters as application/x-www-form-urlencoded'));
    }
    // Every pair, repeated names included: `date=ge2020&date=lt2021` is an AND.
    const pairs = formPairs(request.body) ?? Object.entries(request.body as Record<string, unknown>);
    for (const [k, v] of pairs) {
      params.append(k, String(v));
    }
  }
  const strict = /handling=strict/i.test(String(request.headers.prefer ?? ''));
  const text = await search.search(repo, { resourceType, compartment, params, fhirBase, strict });
  return sendJsonText(reply, 200, text, params.get('_pretty') === 'true');
}
