// The server's layer rule (ARCHITECTURE.md, "Layer rules"), checked on every test run: imports
// point down the layers, only the HTTP layer (and auth's contextFor) uses the HTTP framework, and
// no modules or files import each other in a circle.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkFileCycles,
  checkLayers,
  readImports,
  sourceFiles,
  type LayerRule,
} from '../../../tools/structure/module-graph.js';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Bottom (0) to top. A new folder under src/ must be placed here before its files pass. */
export const SERVER_LAYERS: Record<string, number> = {
  // Foundations: no FHIR, no HTTP.
  platform: 0,
  config: 0,
  errors: 0,
  version: 0,
  // Traces and metrics: the OpenTelemetry API, the Prometheus registry, the pool's instrumentation.
  observability: 0,
  // The database: resources, versions, migrations, binary content.
  storage: 1,
  // Engines over storage: the job queue, search, the operation contract, HTTP-free FHIR logic.
  jobs: 2,
  search: 2,
  operations: 2,
  resources: 2,
  // Domain modules.
  auth: 3,
  terminology: 3,
  bots: 3,
  export: 3,
  subscriptions: 3,
  graphql: 3,
  bootstrap: 3,
  imaging: 3,
  // Care plans: PlanDefinition/$apply.
  careplans: 3,
  // Billing: charges, claims, the payer's answers and the CMS-1500 PDF.
  billing: 3,
  // Secure messaging: Communication/$mark-read, email to offline recipients.
  messaging: 3,
  // Scheduling: Schedule availability, Slots, Appointment $find/$book/$cancel/$reschedule.
  scheduling: 3,
  // Quality measures: Measure/$evaluate-measure (CQL via cql-execution, or FHIRPath).
  measures: 3,
  // The access audit trail: capture, storage, search, chain, retention.
  audit: 3,
  // The FHIRcast hub: topics, events, current context; its websocket subscribers over the message bus.
  fhircast: 3,
  // POST /email/v1/send's checks: who may send, from which verified domains.
  email: 3,
  // SQL on FHIR v2: ViewDefinition evaluation, $run, materialised views in a reporting schema.
  analytics: 3,
  // Bulk Data $import: NDJSON inputs written in batches as the requester.
  'bulk-import': 3,
  // Wires the queue, bots and subscriptions together.
  automation: 4,
  // On-premises agents: their websocket hub runs bots and speaks over the process message bus.
  agent: 4,
  // The composition root.
  services: 5,
  // The HTTP layer: routes turn requests into calls and results into responses.
  http: 6,
  fhir: 6,
  admin: 6,
  scim: 6,
  ratelimit: 6,
  health: 6,
  'app-static': 6,
  'docs-static': 6,
  'auth/http': 6,
  // The process.
  app: 7,
  main: 7,
};

/** A file's module: its first folder (or the file at the top); auth's routes form `auth/http`. */
export function serverModuleOf(file: string): string | undefined {
  if (/\.test\.tsx?$/.test(file) || file.startsWith('test/') || /(^|\/)testing\.ts$/.test(file)) {
    return undefined;
  }
  if (file.startsWith('auth/http/') || file === 'auth/plugin.ts') {
    return 'auth/http';
  }
  const [first, ...rest] = file.split('/');
  return rest.length === 0 ? first.replace(/\.tsx?$/, '') : first;
}

const HTTP_LAYER = SERVER_LAYERS.http;

export const SERVER_RULE: LayerRule = {
  layers: SERVER_LAYERS,
  moduleOf: serverModuleOf,
  forbiddenPackages: (module) =>
    // Below the HTTP layer nothing knows Fastify; auth alone reads the request for its contextFor.
    SERVER_LAYERS[module] < HTTP_LAYER && module !== 'auth' ? /^(fastify|@fastify\/)/ : undefined,
};

describe('server layers', () => {
  const files = sourceFiles(SRC, (file) => serverModuleOf(file) !== undefined);
  const imports = readImports(SRC, files);

  it('reads the whole tree', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(imports.length).toBeGreaterThan(1000);
  });

  it('imports point down the layers, and only the HTTP layer uses Fastify', () => {
    const violations = checkLayers(imports, SERVER_RULE).filter((v) => v.kind !== 'module-cycle');
    expect(violations.map((v) => v.message)).toEqual([]);
  });

  it('no modules import each other', () => {
    const violations = checkLayers(imports, SERVER_RULE).filter((v) => v.kind === 'module-cycle');
    expect(violations.map((v) => v.message)).toEqual([]);
  });

  it('no files import each other', () => {
    expect(checkFileCycles(imports).map((v) => v.message)).toEqual([]);
  });
});
