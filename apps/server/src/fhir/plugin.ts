import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, fail, notAcceptable, unsupportedMediaType, type OperationDefinition } from '@hearth/core';
import { ctx } from './context.js';
import { createInteraction } from './interactions/create.js';
import { conditionalDeleteInteraction, deleteInteraction } from './interactions/delete.js';
import { historyInteraction } from './interactions/history.js';
import { readInteraction } from './interactions/read.js';
import { conditionalUpdateInteraction, updateInteraction } from './interactions/update.js';
import { vreadInteraction } from './interactions/vread.js';
import { conditionalPatchInteraction, patchInteraction } from './interactions/patch.js';
import { bundleInteraction } from './interactions/bundle.js';
import { searchInteraction } from './interactions/search.js';
import { runOperation, streamedOperationRoutes } from './operation-route.js';
import { binaryRoutes } from './binary/routes.js';
import type { BinaryStore } from '../storage/binary-store.js';
import type { BinaryUrlSigner } from '../storage/binary-urls.js';
import { createCapabilityStatement, type CapabilitySearchParam } from './capability.js';
import { HEARTH_VERSION } from '../version.js';
import { shapeResource, type ElementShaper } from '../resources/elements.js';
import type { OperationRegistry } from '../operations/registry.js';
import type { SearchService } from '../search/service.js';
import { responseShape, sendJson, sendJsonText } from '../http/fhir-reply.js';
import type { FhirContextFactory } from '../auth/context-factory.js';
import type { AuditModule } from '../audit/module.js';
import { auditHooks } from './audit-hooks.js';
import { trailReadInteraction, trailSearchInteraction } from './interactions/trail-search.js';

export interface FhirPluginDeps {
  contextFor: FhirContextFactory;
  shaper: ElementShaper;
  operations: OperationRegistry;
  search: SearchService;
  binary: BinaryStore;
  /** Signs Attachment.url of Binaries in responses (and unsigns them in writes); none: URLs left as stored. */
  binaryUrls?: BinaryUrlSigner;
  /** The access audit trail: every request here is recorded (docs/compliance.md). */
  audit?: AuditModule;
  limits: { maxBundleEntries: number; maxBodyBytes: number; maxJsonDepth: number };
  /** The search parameters of a type (with a project's own when given), for the CapabilityStatement. */
  searchParams?: (resourceType: string, projectId?: string) => Promise<CapabilitySearchParam[]>;
}

type P<T> = FastifyRequest<{ Params: T }>;

/** The FHIR REST API (hl7.org/fhir/R4/http.html), registered under /fhir/R4. */
export async function fhirPlugin(app: FastifyInstance, deps: FhirPluginDeps): Promise<void> {
  app.decorateRequest('fhir', null as never);

  app.addHook('preHandler', async (request) => {
    checkFormat(request);
    request.fhir = await deps.contextFor(request);
  });
  const binaryUrls = deps.binaryUrls;
  if (binaryUrls) {
    // Written resources keep Binary/{id}, never a signed URL a client read and sent back.
    app.addHook('preHandler', async (request) => {
      if (
        request.method !== 'GET' &&
        request.body &&
        typeof request.body === 'object' &&
        !Buffer.isBuffer(request.body)
      ) {
        binaryUrls.unsign(request.body);
      }
    });
    // What a caller reads names attachments by signed URLs a browser can load without a token.
    app.addHook('onSend', async (request, reply, payload) => {
      if (
        typeof payload === 'string' &&
        reply.statusCode < 300 &&
        request.fhir &&
        String(reply.getHeader('content-type') ?? '').includes('json')
      ) {
        return binaryUrls.signResponse(payload);
      }
      return payload;
    });
  }
  const audit = deps.audit;
  if (audit) {
    auditHooks(app, audit);
  }

  const search = (
    request: FastifyRequest,
    reply: FastifyReply,
    resourceType?: string,
    compartment?: { resourceType: string; id: string },
  ) =>
    resourceType === 'AuditEvent' && !compartment && audit
      ? trailSearchInteraction(request, reply, audit, () =>
          searchInteraction(request, reply, deps.search, resourceType),
        )
      : searchInteraction(request, reply, deps.search, resourceType, compartment);
  const operation = (request: FastifyRequest, reply: FastifyReply, name: string, resourceType?: string, id?: string) =>
    runOperation(deps.operations, request, reply, name, { resourceType, id });

  // Binary: raw content in and out, in a context of its own (its body parser streams).
  await app.register(binaryRoutes, {
    store: deps.binary,
    maxJsonBytes: deps.limits.maxBodyBytes,
    maxJsonDepth: deps.limits.maxJsonDepth,
  });

  // Operations that take some media types as a stream ($import's NDJSON, CSV, TSV), at their exact paths.
  await app.register(async (scope) => streamedOperationRoutes(scope, deps.operations));

  // The CapabilityStatement (public: the auth module lets GET metadata through without a token).
  const capability = createCapabilityStatement({
    operations: deps.operations,
    searchParams: deps.searchParams,
    version: HEARTH_VERSION,
  });
  app.get('/metadata', async (request, reply) => {
    const { repo, fhirBase } = ctx(request);
    // A signed-in caller sees its project's own SearchParameters too; anonymous callers the base ones.
    const projectId = repo.scope.readProjects?.length ? repo.scope.projectId : undefined;
    return sendJsonText(reply, 200, await capability(fhirBase, projectId), responseShape(request).pretty);
  });

  // System level
  app.get('/', (request, reply) => search(request, reply));
  app.post('/', (request, reply) =>
    bundleInteraction(request, reply, {
      search: deps.search,
      binary: deps.binary,
      maxEntries: deps.limits.maxBundleEntries,
    }),
  );
  app.get('/_history', (request: P<Record<string, never>>, reply) => historyInteraction(request, reply));
  app.get('/_search', (request, reply) => search(request, reply));
  app.post('/_search', (request, reply) => search(request, reply));

  // Type level
  app.get('/:resourceType', (request: P<{ resourceType: string }>, reply) => {
    const { resourceType } = request.params;
    if (resourceType.startsWith('$')) {
      return operation(request, reply, resourceType.slice(1));
    }
    return search(request, reply, resourceType);
  });
  app.post('/:resourceType', (request: P<{ resourceType: string }>, reply) => {
    const { resourceType } = request.params;
    if (resourceType.startsWith('$')) {
      return operation(request, reply, resourceType.slice(1));
    }
    return createInteraction(request, reply);
  });
  app.put('/:resourceType', (request: P<{ resourceType: string }>, reply) =>
    conditionalUpdateInteraction(request, reply),
  );
  app.delete('/:resourceType', (request: P<{ resourceType: string }>, reply) =>
    conditionalDeleteInteraction(request, reply),
  );
  app.patch('/:resourceType', (request: P<{ resourceType: string }>, reply) =>
    conditionalPatchInteraction(request, reply),
  );
  app.get('/:resourceType/_history', (request: P<{ resourceType: string }>, reply) => {
    ctx(request).repo.assertType(request.params.resourceType);
    return historyInteraction(request, reply);
  });
  app.get('/:resourceType/_search', (request: P<{ resourceType: string }>, reply) =>
    search(request, reply, request.params.resourceType),
  );
  app.post('/:resourceType/_search', (request: P<{ resourceType: string }>, reply) =>
    search(request, reply, request.params.resourceType),
  );

  // Instance level
  app.get('/:resourceType/:id', (request: P<{ resourceType: string; id: string }>, reply) => {
    const { resourceType, id } = request.params;
    if (id.startsWith('$')) {
      return operation(request, reply, id.slice(1), resourceType);
    }
    if (resourceType === 'AuditEvent' && audit) {
      return trailReadInteraction(request, reply, audit, () => readInteraction(request, reply, deps.shaper));
    }
    const own = resourceType === 'OperationDefinition' ? deps.operations.definition(id) : undefined;
    if (own) {
      return sendOwnDefinition(request, reply, own, deps.shaper);
    }
    return readInteraction(request, reply, deps.shaper);
  });
  app.post('/:resourceType/:id', (request: P<{ resourceType: string; id: string }>, reply) => {
    const { resourceType, id } = request.params;
    if (id.startsWith('$')) {
      return operation(request, reply, id.slice(1), resourceType);
    }
    fail(badRequest('POST to a resource id is not a FHIR interaction; use PUT to update'));
  });
  app.put('/:resourceType/:id', (request: P<{ resourceType: string; id: string }>, reply) =>
    updateInteraction(request, reply),
  );
  app.delete('/:resourceType/:id', (request: P<{ resourceType: string; id: string }>, reply) =>
    deleteInteraction(request, reply),
  );
  app.patch('/:resourceType/:id', (request: P<{ resourceType: string; id: string }>, reply) =>
    patchInteraction(request, reply),
  );
  app.get('/:resourceType/:id/_history', (request: P<{ resourceType: string; id: string }>, reply) =>
    historyInteraction(request, reply),
  );
  app.get('/:resourceType/:id/_history/:vid', (request: P<{ resourceType: string; id: string; vid: string }>, reply) =>
    vreadInteraction(request, reply, deps.shaper),
  );
  const instanceOpOrCompartment = (
    request: P<{ resourceType: string; id: string; third: string }>,
    reply: FastifyReply,
  ) => {
    const { resourceType, id, third } = request.params;
    if (third.startsWith('$')) {
      return operation(request, reply, third.slice(1), resourceType, id);
    }
    if (request.method === 'POST') {
      fail(badRequest(`POST ${resourceType}/${id}/${third} is not a FHIR interaction`));
    }
    ctx(request).repo.assertType(resourceType);
    return search(request, reply, third === '*' ? undefined : third, { resourceType, id });
  };
  app.get('/:resourceType/:id/:third', instanceOpOrCompartment);
  app.post('/:resourceType/:id/:third', instanceOpOrCompartment);
}

/**
 * The OperationDefinition of an operation this server answers, as its registry holds it: the
 * definitions the CapabilityStatement points at resolve here (a stored one of the same id is shadowed).
 */
function sendOwnDefinition(
  request: FastifyRequest,
  reply: FastifyReply,
  definition: OperationDefinition,
  shaper: ElementShaper,
): FastifyReply {
  ctx(request).repo.scope.access?.assertInteraction('OperationDefinition', 'read');
  const shape = responseShape(request);
  const shaped = shape.summary || shape.elements ? shapeResource(definition, shape, shaper) : definition;
  return sendJson(reply, 200, shaped, shape.pretty);
}

const JSON_FORMATS = new Set(['json', 'application/json', 'application/fhir+json', 'application/json+fhir']);

/** JSON only: _format or Accept asking for anything else is a 406; a non-JSON body on a JSON route a 415. */
function checkFormat(request: FastifyRequest): void {
  const format = (request.query as Record<string, unknown>)._format;
  if (format !== undefined && !isViewRun(request)) {
    const f = String(Array.isArray(format) ? format[0] : format)
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (!JSON_FORMATS.has(f)) {
      fail(notAcceptable(`_format "${f}" is not supported; this server speaks JSON`));
    }
  }
  const accept = request.headers.accept;
  if (accept && !acceptsJson(accept) && !isBinaryRead(request) && !isBotExecute(request) && !isViewRun(request)) {
    fail(notAcceptable(`Accept "${accept}" cannot be served; this server speaks application/fhir+json`));
  }
  if (Buffer.isBuffer(request.body) && !isBinaryWrite(request)) {
    fail(
      unsupportedMediaType(
        `Content-Type "${request.headers['content-type'] ?? ''}" is not supported here; send application/fhir+json`,
      ),
    );
  }
}

function acceptsJson(accept: string): boolean {
  return accept.split(',').some((part) => {
    const type = part.split(';')[0].trim().toLowerCase();
    return type === '*/*' || type === 'application/*' || type.includes('json') || type === '';
  });
}

function isBinaryRead(request: FastifyRequest): boolean {
  return /\/Binary\/[^/]+/.test(request.url.split('?')[0]);
}

/** Bot $execute answers whatever its bot returns (HL7 v2, HTML, CSV...): any Accept may be asked for. */
function isBotExecute(request: FastifyRequest): boolean {
  return /\/Bot\/([^/]+\/)?\$execute$/.test(request.url.split('?')[0]);
}

/** ViewDefinition/$run answers CSV, NDJSON, JSON or Parquet: its _format names its own output (analytics/formats.ts). */
function isViewRun(request: FastifyRequest): boolean {
  return /\/ViewDefinition\/([^/]+\/)?\$run$/.test(request.url.split('?')[0]);
}

function isBinaryWrite(request: FastifyRequest): boolean {
  const path = request.url.split('?')[0];
  return /\/Binary(\/[^/]+)?$/.test(path) || /\/\$[^/]+$/.test(path);
}
