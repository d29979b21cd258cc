import { badRequest, fail, getReferenceString, isValidId, notFoundWith, type Resource } from '@hearth/core';
import { isOutcomeError, primeResource, trackContainer, type GraphqlContext } from './context.js';

type Args = Record<string, unknown>;

/**
 * A GraphQL input value as FHIR JSON: explicit nulls dropped (GraphQL keeps an argument given
 * as null; FHIR JSON has no nulls), empty objects and arrays left out as FHIR requires.
 */
function toJson(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(toJson).filter((v) => v !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const json = toJson(v);
      if (json !== undefined) {
        out[k] = json;
      }
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value === null ? undefined : value;
}

function inputResource(resourceType: string, res: unknown): Resource {
  const json = (toJson(res) ?? {}) as Record<string, unknown>;
  if (json.resourceType !== undefined && json.resourceType !== resourceType) {
    fail(badRequest(`res.resourceType is ${String(json.resourceType)}, expected ${resourceType}`, 'res.resourceType'));
  }
  return { ...json, resourceType } as Resource;
}

/** `PatientCreate(res: {...})`: a create through the caller's repository (validation, access, history). */
export async function createMutation(resourceType: string, args: Args, ctx: GraphqlContext): Promise<Resource> {
  const resource = inputResource(resourceType, args.res);
  const written = await ctx.repo.createResource(resource);
  primeResource(ctx, written.resource);
  return trackContainer(ctx, written.resource);
}

/** `PatientUpdate(id: "..", res: {...})`: an update (or create with that id) of the whole resource. */
export async function updateMutation(resourceType: string, args: Args, ctx: GraphqlContext): Promise<Resource> {
  const id = String(args.id ?? '');
  const resource = inputResource(resourceType, args.res);
  if (resource.id !== undefined && resource.id !== id) {
    fail(badRequest(`res.id (${resource.id}) does not match id (${id})`, 'res.id'));
  }
  const written = await ctx.repo.updateResource({ ...resource, id });
  primeResource(ctx, written.resource);
  return trackContainer(ctx, written.resource);
}

/**
 * `PatientDelete(id: "..")`: deletes the resource and answers it as it was, when the caller
 * may read it (null when it may only delete it).
 */
export async function deleteMutation(resourceType: string, args: Args, ctx: GraphqlContext): Promise<Resource | null> {
  const id = String(args.id ?? '');
  if (!isValidId(id)) {
    fail(notFoundWith(`${resourceType}/${id} not found`));
  }
  let before: Resource | null = null;
  try {
    before = (await ctx.repo.readResource(resourceType, id)).resource;
  } catch (err) {
    if (!isOutcomeError(err) || err.status !== 403) {
      throw err;
    }
  }
  await ctx.repo.deleteResource(resourceType, id);
  const key = before ? getReferenceString(before) : `${resourceType}/${id}`;
  ctx.resources.clear(key).prime(key, null);
  return before;
}
