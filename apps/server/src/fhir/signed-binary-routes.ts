import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail, forbiddenWith } from '@hearth/core';
import type { Repository } from '../storage/repository.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { BinaryUrlSigner } from '../storage/binary-urls.js';
import { assertIdParam } from './context.js';
import { sendBinaryContent } from './binary/content.js';

export interface SignedBinaryRoutesOptions {
  signer: BinaryUrlSigner;
  store: BinaryStore;
  /** Reads as the server: the signature is the permission (given to a reader of the resource naming it). */
  systemRepo: () => Repository;
}

type SignedRequest = FastifyRequest<{ Params: { id: string }; Querystring: { exp?: string; sig?: string } }>;

/**
 * Binary content by signed URL (storage/binary-urls.ts), also under /api: no Authorization header,
 * for `<img src>` and downloads. A wrong or expired signature is a 403 saying which.
 */
export async function signedBinaryRoutes(app: FastifyInstance, options: SignedBinaryRoutesOptions): Promise<void> {
  for (const prefix of ['', '/api']) {
    app.get(`${prefix}/storage/:id`, async (request: SignedRequest, reply) => {
      assertIdParam(request.params.id);
      const verdict = await options.signer.verify(request.params.id, request.query.exp, request.query.sig);
      if (verdict === 'expired') {
        fail(forbiddenWith('This signed URL has expired: read the resource again for a fresh one'));
      }
      if (verdict === 'invalid') {
        fail(forbiddenWith('The signature of this URL is missing or wrong (exp and sig)'));
      }
      const { resource } = await options.systemRepo().readResource('Binary', request.params.id);
      const seconds = Math.max(0, Number(request.query.exp) - Math.floor(Date.now() / 1000));
      reply.header('cache-control', `private, max-age=${seconds}`);
      return sendBinaryContent(reply, options.store, resource);
    });
  }
}
