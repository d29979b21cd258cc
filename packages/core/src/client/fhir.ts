/**
 * The FHIR REST interactions (hl7.org/fhir/R4/http.html), typed by resource type: create, read,
 * vread, history, update, patch, delete, search (as a Bundle, an array, one, or pages), batch.
 */
import type { ExtractResource, Reference, ResourceType } from '@hearth/fhir-types';
import type { Bundle, FhirResource, Resource } from '../fhir-types.js';
import { badRequest, OperationOutcomeError } from '../outcome.js';
import { AuthClient } from './auth.js';
import { JSON_PATCH, toSearchParams, type QueryTypes } from './http.js';
import type { PatchOperation, RequestOptions } from './types.js';

/** Any resource: a generated resource type or any resource-shaped JSON. */
export type AnyResource = Resource | FhirResource;

/**
 * The type a write resolves with: the generated type of a known resourceType (so that
 * `createResource({ resourceType: 'Patient', ... })` gives a Patient, with id and meta), else T.
 */
export type WrittenResource<T> = T extends { resourceType: infer K extends ResourceType } ? ExtractResource<K> : T;

/** The resources of a search result, with the Bundle they came in. */
export type ResourceArray<T> = T[] & { bundle: Bundle<T> };

/** Options of an update: `ifMatch` makes it conditional on the current version (hl7.org/fhir/R4/http.html#concurrency). */
export interface UpdateOptions extends RequestOptions {
  /** The versionId the resource must still have; sent as If-Match: W/"versionId". */
  ifMatch?: string;
}

/** The resources of a search Bundle's `match` entries (includes are in `.bundle`). */
export function bundleToResourceArray<T>(bundle: Bundle<T>): ResourceArray<T> {
  const resources = (bundle.entry ?? [])
    .filter((e) => e.resource !== undefined && (e.search?.mode === undefined || e.search.mode === 'match'))
    .map((e) => e.resource as T);
  return Object.assign(resources, { bundle });
}

function requireId(id: string | undefined, what: string): string {
  if (!id) {
    throw new OperationOutcomeError(badRequest(`${what} needs a resource id`, 'id'));
  }
  return id;
}

function requireType(resource: AnyResource | undefined): string {
  if (!resource || typeof resource.resourceType !== 'string' || !resource.resourceType) {
    throw new OperationOutcomeError(badRequest('Missing resourceType', 'resourceType'));
  }
  return resource.resourceType;
}

export class FhirClient extends AuthClient {
  /** Creates a resource (POST [type]); resolves with it as stored, with id and meta. */
  async createResource<T extends AnyResource>(resource: T, options?: RequestOptions): Promise<WrittenResource<T>> {
    const type = requireType(resource);
    return this.remember(await this.post<WrittenResource<T>>(this.fhirUrl(type), resource, undefined, options));
  }

  /**
   * Creates a resource unless one matches the search `query` (If-None-Exist,
   * hl7.org/fhir/R4/http.html#ccreate); resolves with the created or the existing resource.
   */
  async createResourceIfNoneExist<T extends AnyResource>(
    resource: T,
    query: string,
    options?: RequestOptions,
  ): Promise<WrittenResource<T>> {
    const type = requireType(resource);
    const headers = { ...options?.headers, 'If-None-Exist': query.replace(/^[^?]*\?/, '') };
    return this.remember(
      await this.post<WrittenResource<T>>(this.fhirUrl(type), resource, undefined, { ...options, headers }),
    );
  }

  /** Reads a resource by type and id (GET [type]/[id]). */
  async readResource<K extends ResourceType>(
    resourceType: K,
    id: string,
    options?: RequestOptions,
  ): Promise<ExtractResource<K>> {
    return this.get<ExtractResource<K>>(this.fhirUrl(resourceType, requireId(id, 'readResource')), options);
  }

  /** Reads the resource a Reference points at ('Patient/123', or an absolute URL on this server). */
  readReference<T>(reference: Reference<T>, options?: RequestOptions): Promise<T> {
    const ref = reference?.reference;
    if (!ref) {
      return Promise.reject(
        new OperationOutcomeError(badRequest('The reference has no reference string', 'reference')),
      );
    }
    if (ref.startsWith('#')) {
      return Promise.reject(new OperationOutcomeError(badRequest('A contained reference cannot be read', 'reference')));
    }
    const relative = ref.startsWith(this.fhirBaseUrl) ? ref.slice(this.fhirBaseUrl.length) : ref;
    if (/^[a-z]+:/i.test(relative)) {
      return this.get<T>(relative, options);
    }
    const [type, id] = relative.split('/');
    if (!type || !id) {
      return Promise.reject(new OperationOutcomeError(badRequest(`Invalid reference: ${ref}`, 'reference')));
    }
    return this.get<T>(this.fhirUrl(type, id), options);
  }

  /** The version history of a resource (GET [type]/[id]/_history), newest first. */
  async readHistory<K extends ResourceType>(
    resourceType: K,
    id: string,
    options?: RequestOptions & { query?: QueryTypes },
  ): Promise<Bundle<ExtractResource<K>>> {
    const url = this.fhirSearchUrl(`${resourceType}/${requireId(id, 'readHistory')}/_history`, options?.query);
    return this.get(url, options);
  }

  /** One version of a resource (GET [type]/[id]/_history/[vid]). */
  async readVersion<K extends ResourceType>(
    resourceType: K,
    id: string,
    versionId: string,
    options?: RequestOptions,
  ): Promise<ExtractResource<K>> {
    return this.get(this.fhirUrl(resourceType, requireId(id, 'readVersion'), '_history', versionId), options);
  }

  /** Replaces a resource (PUT [type]/[id]); resolves with the stored version. */
  async updateResource<T extends AnyResource>(resource: T, options?: UpdateOptions): Promise<WrittenResource<T>> {
    const type = requireType(resource);
    const id = requireId(resource.id, 'updateResource');
    const { ifMatch, ...rest } = options ?? {};
    const headers = ifMatch ? { ...rest.headers, 'If-Match': `W/"${ifMatch}"` } : rest.headers;
    const updated = await this.put<WrittenResource<T> | undefined>(this.fhirUrl(type, id), resource, undefined, {
      ...rest,
      headers,
    });
    // 304 Not Modified (or an empty answer under Prefer: return=minimal): the resource is as sent.
    return this.remember(updated ?? (resource as unknown as WrittenResource<T>));
  }

  /**
   * Creates or updates the one resource matching `query` (conditional update, PUT [type]?query,
   * hl7.org/fhir/R4/http.html#cond-update).
   */
  async upsertResource<T extends AnyResource>(
    resource: T,
    query: QueryTypes,
    options?: RequestOptions,
  ): Promise<WrittenResource<T>> {
    const type = requireType(resource);
    return this.remember(
      await this.put<WrittenResource<T>>(this.fhirSearchUrl(type, query), resource, undefined, options),
    );
  }

  /** Applies a JSON Patch (RFC 6902) to a resource (PATCH [type]/[id]). */
  async patchResource<K extends ResourceType>(
    resourceType: K,
    id: string,
    operations: PatchOperation[],
    options?: RequestOptions,
  ): Promise<ExtractResource<K>> {
    const url = this.fhirUrl(resourceType, requireId(id, 'patchResource'));
    return this.remember(await this.patch<ExtractResource<K>>(url, JSON.stringify(operations), JSON_PATCH, options));
  }

  /** Deletes a resource (DELETE [type]/[id]). */
  async deleteResource(resourceType: ResourceType, id: string, options?: RequestOptions): Promise<void> {
    await this.delete(this.fhirUrl(resourceType, requireId(id, 'deleteResource')), options);
  }

  /** Searches (GET [type]?query); resolves with the searchset Bundle. */
  async search<K extends ResourceType>(
    resourceType: K,
    query?: QueryTypes,
    options?: RequestOptions,
  ): Promise<Bundle<ExtractResource<K>>> {
    return this.get(this.fhirSearchUrl(resourceType, query), options);
  }

  /** Searches and resolves with the matching resources as an array; the Bundle is on `.bundle`. */
  async searchResources<K extends ResourceType>(
    resourceType: K,
    query?: QueryTypes,
    options?: RequestOptions,
  ): Promise<ResourceArray<ExtractResource<K>>> {
    return bundleToResourceArray(await this.search(resourceType, query, options));
  }

  /** The first match of a search (asked for with _count=1), or undefined. */
  async searchOne<K extends ResourceType>(
    resourceType: K,
    query?: QueryTypes,
    options?: RequestOptions,
  ): Promise<ExtractResource<K> | undefined> {
    const params = toSearchParams(query);
    params.set('_count', '1');
    params.delete('_summary');
    return (await this.searchResources(resourceType, params, options))[0];
  }

  /** Every page of a search, one array of resources per page, following the Bundle's `next` links. */
  async *searchResourcePages<K extends ResourceType>(
    resourceType: K,
    query?: QueryTypes,
    options?: RequestOptions,
  ): AsyncGenerator<ResourceArray<ExtractResource<K>>> {
    let url: string | undefined = this.fhirSearchUrl(resourceType, query);
    const seen = new Set<string>();
    while (url && !seen.has(url)) {
      seen.add(url);
      const bundle: Bundle<ExtractResource<K>> = await this.get(url, options);
      yield bundleToResourceArray(bundle);
      url = bundle.link?.find((link) => link.relation === 'next')?.url;
    }
  }

  /** Sends a batch or transaction Bundle (POST [base]); resolves with the response Bundle. */
  executeBatch(bundle: Bundle<AnyResource>, options?: RequestOptions): Promise<Bundle> {
    if (bundle?.resourceType !== 'Bundle') {
      return Promise.reject(new OperationOutcomeError(badRequest('executeBatch needs a Bundle', 'resourceType')));
    }
    return this.post(this.fhirBaseUrl, bundle, undefined, options);
  }

  /** Keeps a resource just written as the answer to its read; returns it. */
  private remember<T>(written: T): T {
    const resource = written as AnyResource | undefined;
    if (resource?.resourceType && resource.id) {
      this.cache.set(this.fhirUrl(resource.resourceType, resource.id), resource);
    }
    return written;
  }
}
