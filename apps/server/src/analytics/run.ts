/**
 * ViewDefinition/$run and ViewDefinition/{id}/$run (build.fhir.org/ig/FHIR/sql-on-fhir-v2/OperationDefinition-ViewDefinitionRun.html):
 * a stored or inline view over the resources the caller may read (or over inline `resource`s),
 * answered as CSV, NDJSON, JSON or Parquet. Text formats stream page by page: the first page is
 * shaped before the answer starts, so a view error or a search refusal is still a 4xx; a data error
 * on a later page ends the stream early. Free of HTTP.
 */
import { Readable } from 'node:stream';
import { badRequest, fail, unprocessable, type Resource } from '@hearth/core';
import type { OperationRegistry } from '../operations/registry.js';
import type { OperationInput, OperationResult } from '../operations/types.js';
import { isResourceTypeName } from '../search/resource-types.js';
import type { SearchService } from '../search/service.js';
import type { Repository } from '../storage/repository.js';
import { CONTENT_TYPES, parquetFile, textWriter } from './formats.js';
import { VIEW_RUN } from './operation-definitions.js';
import { runParams, type RunParams } from './run-params.js';
import { resourcePages } from './source.js';
import { compileView, type CompiledView, type Row } from './view.js';
import { ViewError } from './view-error.js';

export interface ViewRunDeps {
  search: SearchService;
}

/** Compiles a view, a malformed one answering 400 with the element at fault. */
export function compileOrFail(view: unknown): CompiledView {
  try {
    return compileView(view, isResourceTypeName);
  } catch (err) {
    if (err instanceof ViewError) fail(badRequest(`ViewDefinition: ${err.message}`, err.location));
    throw err;
  }
}

/** The rows of one resource; a resource the view cannot shape answers 422. */
export function rowsOrFail(view: CompiledView, resource: Resource): Row[] {
  try {
    return view.rows(resource);
  } catch (err) {
    if (err instanceof ViewError) fail(unprocessable(`ViewDefinition: ${err.message}`, err.location));
    throw err;
  }
}

async function viewOf(input: OperationInput, params: RunParams): Promise<unknown> {
  const { repo } = input.context;
  const id = input.target.id ?? params.viewId;
  if (input.target.id && (params.viewId || params.viewResource)) {
    fail(badRequest('ViewDefinition/{id}/$run takes its view from the id: no viewReference or viewResource'));
  }
  if (id) return (await repo.readResource('ViewDefinition', id)).resource;
  if (params.viewResource) return params.viewResource;
  return fail(badRequest('ViewDefinition/$run needs viewResource (the view) or viewReference', 'viewResource'));
}

/** Pages of rows: over the inline resources, or the caller's stored resources of the view's type. */
async function* rowPages(
  deps: ViewRunDeps,
  repo: Repository,
  fhirBase: string,
  view: CompiledView,
  params: RunParams,
): AsyncGenerator<Row[]> {
  let left = params.limit ?? Infinity;
  const pages: AsyncIterable<Resource[]> = params.resources
    ? (async function* () {
        yield params.resources as Resource[];
      })()
    : resourcePages(deps.search, repo, fhirBase, view.resource, params, view.needsDecimalText);
  for await (const resources of pages) {
    const rows: Row[] = [];
    for (const resource of resources) {
      for (const row of rowsOrFail(view, resource)) {
        if (left-- <= 0) break;
        rows.push(row);
      }
      if (left <= 0) break;
    }
    yield rows;
    if (left <= 0) return;
  }
}

async function runView(deps: ViewRunDeps, input: OperationInput): Promise<OperationResult> {
  const params = runParams(input);
  const view = compileOrFail(await viewOf(input, params));
  const { repo, fhirBase } = input.context;
  const pages = rowPages(deps, repo, fhirBase, view, params);
  const contentType = CONTENT_TYPES[params.format];
  if (params.format === 'parquet') {
    const rows: Row[] = [];
    for await (const page of pages) rows.push(...page);
    return { body: parquetFile(view.columns, rows), contentType };
  }
  const writer = textWriter(params.format, view.columns, params.header);
  let first = true;
  const text = (rows: Row[]) =>
    rows
      .map((row) => {
        const chunk = writer.row(row, first);
        first = false;
        return chunk;
      })
      .join('');
  // The first page before answering: errors there are still a status code, not a cut stream.
  const head = await pages.next();
  const opening = writer.start() + (head.done ? '' : text(head.value));
  if (head.done) return { body: opening + writer.end(), contentType };
  const rest = (async function* () {
    yield opening;
    for await (const page of pages) {
      const chunk = text(page);
      if (chunk) yield chunk;
    }
    yield writer.end();
  })();
  return { body: Readable.from(rest, { objectMode: false }), contentType };
}

/** Registers $run at type level (inline or referenced view) and instance level (a stored view). */
export function registerViewRun(registry: OperationRegistry, deps: ViewRunDeps): void {
  registry.register({ definition: VIEW_RUN, handler: (input) => runView(deps, input) });
}
