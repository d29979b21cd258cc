// One batch or transaction entry as a FHIR interaction: hl7.org/fhir/R4/http.html#trules
import { badRequest, fail, type OperationOutcome, type Resource } from '@hearth/core';
import type { Repository } from '../../storage/repository.js';
import type { ReadResult, WriteResult } from '../../storage/types.js';
import type { BinaryStore } from '../../storage/binary-store.js';
import type { SearchService } from '../../search/service.js';
import { historyBundleText } from '../../resources/history.js';
import { MAX_CONDITIONAL_DELETE } from '../interactions/delete.js';
import { patchResource } from '../../resources/patch/apply.js';
import { storeBinaryResource } from '../binary/content.js';
import { keepBinaryStorage } from '../../storage/binary-key.js';
import type { RequestEntry } from './parse.js';
import { parseJsonBody } from '../../http/body.js';

const MAX_PATCH_DEPTH = 64;

export interface EntryDeps {
  fhirBase: string;
  search: SearchService;
  binary: BinaryStore;
  /** Told of every Binary content written, so a transaction can remove them on rollback. */
  onStored?: (key: string) => void;
}

/** What an entry answers: response.status/location/etag/lastModified and the resource or Bundle text. */
export interface EntryResult {
  status: number;
  /** Relative to the base: Patient/1/_history/2 */
  location?: string;
  etag?: string;
  lastModified?: string;
  /** JSON text of the resource (or Bundle) the entry answers with. */
  body?: string;
  /** Absolute URL of the resource the entry created, updated or read. */
  fullUrl?: string;
  outcome?: OperationOutcome;
}

export function writeEntryResult(result: WriteResult | ReadResult, fhirBase: string, status: number): EntryResult {
  const { resourceType, id } = result.resource;
  return {
    status,
    location: `${resourceType}/${id}/_history/${result.versionId}`,
    etag: `W/"${result.versionId}"`,
    lastModified: result.lastUpdated.toISOString(),
    body: result.content,
    fullUrl: `${fhirBase}${resourceType}/${id}`,
  };
}

/** Runs one entry against a repository (inside the transaction's, for transactions). */
export async function executeEntry(repo: Repository, entry: RequestEntry, deps: EntryDeps): Promise<EntryResult> {
  const { target } = entry;
  const where = `Bundle.entry[${entry.index}].request.url`;
  switch (entry.method) {
    case 'GET':
    case 'HEAD':
      return executeRead(repo, entry, deps);
    case 'POST': {
      if (target.resourceType && target.special === '_search' && !target.id) {
        return executeRead(repo, { ...entry, method: 'GET' }, deps);
      }
      if (!target.resourceType || target.id || target.special) {
        fail(badRequest(`POST ${entry.url} is not a create`, where));
      }
      return writeWithBinary(entry.resource as Resource, deps, async (resource) => {
        const result = entry.ifNoneExist
          ? await repo.createResourceIfNoneExist(resource, entry.ifNoneExist)
          : await repo.createResource(resource);
        return writeEntryResult(result, deps.fhirBase, result.created ? 201 : 200);
      });
    }
    case 'PUT': {
      const resource = entry.resource as Resource;
      if (target.special || !target.resourceType) {
        fail(badRequest(`PUT ${entry.url} is not an update`, where));
      }
      if (!target.id) {
        if (!target.query) {
          fail(badRequest('A conditional update needs search parameters', where));
        }
        return writeWithBinary(resource, deps, async (r) => {
          const result = await repo.conditionalUpdate(r, target.query);
          return writeEntryResult(result, deps.fhirBase, result.created ? 201 : 200);
        });
      }
      if (resource.id !== undefined && resource.id !== target.id) {
        fail(
          badRequest(
            `Resource id ${String(resource.id)} does not match request.url ${entry.url}`,
            `Bundle.entry[${entry.index}].resource.id`,
          ),
        );
      }
      return writeWithBinary({ ...resource, id: target.id }, deps, async (r) => {
        const result = await repo.updateResource(r, { ifMatch: entry.ifMatch });
        return writeEntryResult(result, deps.fhirBase, result.created ? 201 : 200);
      });
    }
    case 'PATCH': {
      if (!target.resourceType || target.special) {
        fail(badRequest(`PATCH ${entry.url} is not a patch`, where));
      }
      const id = target.id ?? (await repo.resolveCondition(target.resourceType, requireQuery(target.query, where)));
      const result = await patchResource(repo, target.resourceType, id, patchBodyOf(entry), {
        ifMatch: entry.ifMatch,
        guard: target.resourceType === 'Binary' ? keepBinaryStorage : undefined,
      });
      return writeEntryResult(result, deps.fhirBase, 200);
    }
    case 'DELETE': {
      if (!target.resourceType || target.special) {
        fail(badRequest(`DELETE ${entry.url} is not a delete`, where));
      }
      if (target.id) {
        await repo.deleteResource(target.resourceType, target.id, { ifMatch: entry.ifMatch });
      } else {
        await repo.conditionalDelete(target.resourceType, requireQuery(target.query, where), MAX_CONDITIONAL_DELETE);
      }
      return { status: 204 };
    }
  }
}

async function executeRead(repo: Repository, entry: RequestEntry, deps: EntryDeps): Promise<EntryResult> {
  const { target } = entry;
  const params = new URLSearchParams(target.query);
  if (target.special === '_history' && !target.versionId) {
    const q: Record<string, string | string[]> = {};
    for (const name of new Set(params.keys())) {
      const all = params.getAll(name);
      q[name] = all.length === 1 ? all[0] : all;
    }
    const body = await historyBundleText(repo, deps.fhirBase, target, q);
    return { status: 200, body };
  }
  if (target.resourceType && target.id) {
    const result = target.versionId
      ? await repo.readVersion(target.resourceType, target.id, target.versionId)
      : await repo.readResource(target.resourceType, target.id);
    const etag = `W/"${result.versionId}"`;
    if (entry.ifNoneMatch && entry.ifNoneMatch.replace(/^W\//, '') === etag.replace(/^W\//, '')) {
      return { status: 304, etag, lastModified: result.lastUpdated.toISOString() };
    }
    return { ...writeEntryResult(result, deps.fhirBase, 200), location: undefined };
  }
  if (target.resourceType) {
    repo.assertType(target.resourceType);
  }
  const body = await deps.search.search(repo, {
    resourceType: target.resourceType,
    params,
    fhirBase: deps.fhirBase,
    strict: false,
  });
  return { status: 200, body };
}

/** A Binary's base64 data goes to the binary store before its row is written, and is removed again if the write fails. */
async function writeWithBinary(
  resource: Resource,
  deps: EntryDeps,
  write: (resource: Resource) => Promise<EntryResult>,
): Promise<EntryResult> {
  if (resource.resourceType !== 'Binary') {
    return write(resource);
  }
  const stored = await storeBinaryResource(deps.binary, resource);
  if (stored.key) {
    deps.onStored?.(stored.key);
  }
  try {
    return await write(stored.resource);
  } catch (err) {
    if (stored.key) {
      await deps.binary.remove(stored.key);
    }
    throw err;
  }
}

/** A PATCH entry's body: a Parameters resource (FHIRPath Patch) or a Binary holding a JSON Patch. */
export function patchBodyOf(entry: RequestEntry): unknown {
  const resource = entry.resource as (Resource & { data?: unknown; contentType?: string }) | undefined;
  const where = `Bundle.entry[${entry.index}].resource`;
  if (!resource) {
    fail(badRequest('A PATCH entry needs a resource: Parameters or a Binary holding a JSON Patch', where));
  }
  if (resource.resourceType === 'Parameters') {
    return resource;
  }
  if (resource.resourceType === 'Binary' && typeof resource.data === 'string') {
    try {
      return parseJsonBody(Buffer.from(resource.data, 'base64').toString('utf8'), MAX_PATCH_DEPTH);
    } catch {
      fail(badRequest('The Binary of a PATCH entry must hold a JSON Patch document', `${where}.data`));
    }
  }
  fail(badRequest('A PATCH entry needs a resource: Parameters or a Binary holding a JSON Patch', where));
}

function requireQuery(query: string, where: string): string {
  if (!query) {
    fail(badRequest('A conditional interaction needs search parameters', where));
  }
  return query;
}
