// hl7.org/fhir/R4/http.html#patch: JSON Patch or FHIRPath Patch; the result is stored like an update.
import { badRequest, fail, OperationOutcomeError, preconditionFailed, type Resource } from '@hearth/core';
import { parseKeepingDecimals } from '../../storage/decimal-json.js';
import type { Repository } from '../../storage/repository.js';
import type { WriteResult } from '../../storage/types.js';
import { applyFhirPathPatch, isFhirPathPatch } from './fhirpath-patch.js';
import { applyJsonPatch } from './json-patch.js';

/** Applies a PATCH body (JSON Patch array or FHIRPath Patch Parameters) to a copy of a resource. */
export function applyPatchBody<T extends Resource>(current: T, body: unknown): T {
  let patched: unknown;
  if (isFhirPathPatch(body)) {
    patched = applyFhirPathPatch(current, body);
  } else if (Array.isArray(body)) {
    patched = applyJsonPatch(current, body);
  } else {
    fail(
      badRequest(
        'A PATCH body must be a JSON Patch array (application/json-patch+json) or a FHIRPath Patch Parameters resource',
      ),
    );
  }
  if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
    fail(badRequest('The patch must leave a resource (a JSON object)'));
  }
  const result = patched as T;
  if (result.resourceType !== current.resourceType) {
    fail(badRequest('A patch may not change resourceType', 'resourceType'));
  }
  if (result.id !== current.id) {
    fail(badRequest('A patch may not change the resource id', `${current.resourceType}.id`));
  }
  return result;
}

/** Fields of the stored resource a patch must not change, re-applied after patching (e.g. Binary storage keys). */
export type PatchGuard = (current: Resource, patched: Resource) => Resource;

/** Lost races without If-Match are retried on top of the newer version, like a plain update. */
const MAX_PATCH_ATTEMPTS = 10;

/**
 * Reads the current version, applies the patch and writes it as an update of exactly that version.
 * With If-Match, a stale version is a 412; without, a concurrent writer makes us re-read and retry.
 */
export async function patchResource(
  repo: Repository,
  resourceType: string,
  id: string,
  body: unknown,
  options: { ifMatch?: number; guard?: PatchGuard } = {},
): Promise<WriteResult> {
  for (let attempt = 1; ; attempt++) {
    const current = await repo.readResource(resourceType, id);
    if (options.ifMatch !== undefined && current.versionId !== options.ifMatch) {
      fail(preconditionFailed(`Version ${options.ifMatch} is not the current version of ${resourceType}/${id}`));
    }
    // Parsed keeping the stored decimals' text (1.0), so what the patch leaves alone stays as written.
    const resource = parseKeepingDecimals(current.content) as Resource;
    let patched = applyPatchBody(resource, body);
    if (options.guard) {
      patched = options.guard(resource, patched);
    }
    try {
      return await repo.updateResource(patched, { ifMatch: current.versionId });
    } catch (err) {
      const lostRace = err instanceof OperationOutcomeError && err.status === 412;
      if (!lostRace || options.ifMatch !== undefined || attempt >= MAX_PATCH_ATTEMPTS) {
        throw err;
      }
    }
  }
}
