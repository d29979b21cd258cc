import { isUUID, type Resource } from '@hearth/core';

/**
 * Binary content lives in the binary store, not in the JSON tables; the stored Binary resource
 * names its content with this extension on meta (R4 Binary has no extension element of its own).
 * Only the server sets it: every Binary write path replaces whatever a client sent.
 */
export const BINARY_STORAGE_EXTENSION = 'https://hearth.dev/fhir/StructureDefinition/binary-storage';

interface MetaExtension {
  url: string;
  valueString?: string;
}

/** The storage key of a stored Binary, or undefined when it has no stored content. */
export function storageKeyOf(resource: Resource): string | undefined {
  const ext = metaExtensions(resource).find((e) => e.url === BINARY_STORAGE_EXTENSION);
  return ext && isUUID(ext.valueString) ? ext.valueString : undefined;
}

/** A copy of the Binary naming `key` as its content (or no content when key is undefined). */
export function withStorageKey<T extends Resource>(resource: T, key: string | undefined): T {
  const others = metaExtensions(resource).filter((e) => e.url !== BINARY_STORAGE_EXTENSION);
  const extension = key ? [...others, { url: BINARY_STORAGE_EXTENSION, valueString: key }] : others;
  const meta: Record<string, unknown> = { ...(resource.meta ?? {}) };
  if (extension.length > 0) {
    meta.extension = extension;
  } else {
    delete meta.extension;
  }
  const out = { ...resource, meta } as T;
  if (Object.keys(meta).length === 0) {
    delete out.meta;
  }
  return out;
}

/** Patch guard: a patch never changes which stored content a Binary names. */
export function keepBinaryStorage(current: Resource, patched: Resource): Resource {
  return withStorageKey(patched, storageKeyOf(current));
}

function metaExtensions(resource: Resource): MetaExtension[] {
  const ext = (resource.meta as { extension?: unknown } | undefined)?.extension;
  return Array.isArray(ext) ? (ext as MetaExtension[]).filter((e) => typeof e === 'object' && e !== null) : [];
}
