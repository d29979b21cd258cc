// Batch and transaction Bundles posted to the FHIR base: hl7.org/fhir/R4/http.html#transaction
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Bundle } from '@hearth/core';
import { ctx } from '../context.js';
import { errorToOutcome } from '../../errors/to-outcome.js';
import { preferReturn, responseShape, sendJsonText } from '../../http/fhir-reply.js';
import { executeEntry, type EntryDeps, type EntryResult } from '../bundle/entry.js';
import { assertBundleType, parseEntries } from '../bundle/parse.js';
import { responseBundleText } from '../bundle/response.js';
import { annotate, runTransaction } from '../bundle/transaction.js';
import type { BinaryStore } from '../../storage/binary-store.js';
import type { SearchService } from '../../search/service.js';

export interface BundleDeps {
  search: SearchService;
  binary: BinaryStore;
  maxEntries: number;
}

export async function bundleInteraction(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: BundleDeps,
): Promise<FastifyReply> {
  const type = assertBundleType(request.body);
  const { repo, fhirBase } = ctx(request);
  const { entries, errors } = parseEntries(request.body as Bundle, fhirBase, deps.maxEntries);
  const entryDeps: EntryDeps = { fhirBase, search: deps.search, binary: deps.binary };
  let results: EntryResult[];
  if (type === 'transaction') {
    // Any malformed entry fails the whole transaction before anything runs.
    const [first] = [...errors.values()];
    if (first) {
      throw first;
    }
    results = await runTransaction(repo, entries, entryDeps);
  } else {
    // Batch: each entry on its own, in the order given; a failure is that entry's response.
    results = new Array<EntryResult>(entries.length + errors.size);
    for (const [index, err] of errors) {
      results[index] = failedEntry(request, err);
    }
    for (const entry of entries) {
      try {
        results[entry.index] = await executeEntry(repo, entry, entryDeps);
      } catch (err) {
        results[entry.index] = failedEntry(request, annotate(err, entry));
      }
    }
  }
  const text = responseBundleText(`${type}-response`, results, preferReturn(request));
  return sendJsonText(reply, 200, text, responseShape(request).pretty);
}

function failedEntry(request: FastifyRequest, err: unknown): EntryResult {
  const mapped = errorToOutcome(err);
  if (mapped.unexpected) {
    request.log.error({ err }, 'unexpected error in a batch entry');
  }
  return { status: mapped.status, outcome: mapped.outcome };
}
