import type { FastifyRequest } from 'fastify';
import type { FhirContext } from '../operations/context.js';

/** Builds the FHIR context (repository scope, base URL) of a request; the auth module provides it. */
export type FhirContextFactory = (request: FastifyRequest) => Promise<FhirContext>;
