// Content sharing (fhircast.org, "Content sharing"): a DiagnosticReport-update's `updates` Bundle
// applied to the content of the anchor context, and the anchor's own attributes updated.
import { badRequest, fail, type Resource } from '@hearth/core';
import type { ContextItem } from './events.js';

interface BundleEntry {
  resource?: Resource;
  request?: { method?: string; url?: string };
}

function keyOf(resource: Resource): string {
  return `${resource.resourceType}/${resource.id}`;
}

/**
 * The content after an update: each entry of the transaction Bundle `updates` adds (POST), replaces
 * (PUT) or removes (DELETE, by `request.url` Type/id) one resource. An entry naming a resource of the
 * context itself (the report, its patient or study) updates that resource's attributes instead.
 * Returns the new content and context; the inputs are left as they were.
 */
export function applyUpdates(
  content: Resource[],
  context: ContextItem[],
  updates: Resource,
): { content: Resource[]; context: ContextItem[] } {
  const entries = (updates as { entry?: unknown }).entry;
  if (entries !== undefined && !Array.isArray(entries)) {
    fail(badRequest('updates.entry must be an array', 'event.context.updates.entry'));
  }
  const result = new Map(content.map((r) => [keyOf(r), r]));
  const contextOut = context.map((item) => ({ ...item }));
  ((entries ?? []) as BundleEntry[]).forEach((entry, i) => {
    const where = `event.context.updates.entry[${i}]`;
    const method = entry?.request?.method;
    if (method !== 'POST' && method !== 'PUT' && method !== 'DELETE') {
      fail(badRequest('Each update needs request.method POST, PUT or DELETE', `${where}.request.method`));
    }
    if (method === 'DELETE') {
      const url = entry.request?.url ?? (entry.resource ? keyOf(entry.resource) : undefined);
      if (!url || !/^[A-Za-z]+\/[A-Za-z0-9\-.]{1,64}$/.test(url)) {
        fail(badRequest('A DELETE update needs request.url Type/id', `${where}.request.url`));
      }
      result.delete(url);
      return;
    }
    const resource = entry.resource;
    if (!resource || typeof resource !== 'object' || typeof resource.resourceType !== 'string') {
      fail(badRequest(`A ${method} update needs a resource`, `${where}.resource`));
    }
    if (typeof resource.id !== 'string' || resource.id === '') {
      fail(
        badRequest(`A ${method} update's resource needs an id (the content is shared by id)`, `${where}.resource.id`),
      );
    }
    const key = keyOf(resource);
    const inContext = contextOut.find((item) => item.resource && keyOf(item.resource) === key);
    if (inContext?.resource) {
      inContext.resource = { ...inContext.resource, ...resource };
      return;
    }
    result.set(key, resource);
  });
  return { content: [...result.values()], context: contextOut };
}

/** The content as the current context shows it: a Bundle of type collection. */
export function contentBundle(content: Resource[]): Resource {
  return { resourceType: 'Bundle', type: 'collection', entry: content.map((resource) => ({ resource })) };
}
