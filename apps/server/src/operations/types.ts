// The contract of a FHIR $operation (hl7.org/fhir/R4/operations.html), free of HTTP: the fhir
// layer turns a request into an OperationInput and the OperationResult into the response.
import type { Readable } from 'node:stream';
import type { FhirContext } from './context.js';

export type OperationLevel = 'system' | 'type' | 'instance';

export type OperationMethod = 'GET' | 'POST';

export interface OperationTarget {
  /** Undefined at system level. */
  resourceType?: string;
  /** Set at instance level. */
  id?: string;
}

export interface OperationInput {
  method: OperationMethod;
  target: OperationTarget;
  context: FhirContext;
  /** The query string, parameters in their order. */
  query: URLSearchParams;
  /**
   * The body: parsed JSON (a Parameters or other resource), parsed form pairs, a Buffer for other
   * media types, a Readable for the types the operation takes as a stream; undefined without one.
   */
  body: unknown;
  /** Request headers by lower-case name. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The absolute request URL (AsyncJob.request, links). */
  url: string;
}

/**
 * What an operation answers. `json` is sent as application/fhir+json (indented on `_pretty=true`);
 * `body` with its `contentType` for anything else (a bot's HL7 v2 answer, GraphQL's
 * application/json); neither: an empty body.
 */
export interface OperationResult {
  /** 200 when not given. */
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  /** A Readable is streamed (a large answer produced page by page, e.g. ViewDefinition/$run). */
  body?: string | Buffer | Readable;
  contentType?: string;
}

export type OperationHandler = (input: OperationInput) => Promise<OperationResult>;
