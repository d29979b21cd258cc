import type { Meta, Reference, Resource } from '@hearth/core';
import { stringifyKeepingDecimals } from './decimal-json.js';
import type { StoredVersion } from './types.js';

export interface BuildVersionInput {
  resource: Resource;
  id: string;
  projectId: string;
  versionId: number;
  lastUpdated: Date;
  author?: Reference;
  compartments: (resource: Resource) => string[];
}

/**
 * The server owns id, meta.versionId, meta.lastUpdated, meta.project and meta.author; the client's
 * meta.profile, tag, security and source are kept. Keys come out in a stable order (resourceType,
 * id, meta first) and the text is stored as served.
 */
export function buildStoredVersion(input: BuildVersionInput): StoredVersion {
  const { resourceType, id: _id, meta: clientMeta, ...rest } = input.resource;
  const meta: Meta = {};
  meta.versionId = String(input.versionId);
  meta.lastUpdated = input.lastUpdated.toISOString();
  if (clientMeta?.source !== undefined) {
    meta.source = clientMeta.source;
  }
  if (clientMeta?.profile !== undefined) {
    meta.profile = clientMeta.profile;
  }
  if (clientMeta?.security !== undefined) {
    meta.security = clientMeta.security;
  }
  if (clientMeta?.tag !== undefined) {
    meta.tag = clientMeta.tag;
  }
  const keptExtensions = (clientMeta as Record<string, unknown> | undefined)?.extension;
  const resource: Resource = { resourceType, id: input.id, meta, ...rest };
  if (keptExtensions !== undefined) {
    (meta as Record<string, unknown>).extension = keptExtensions;
  }
  meta.project = input.projectId;
  if (input.author) {
    meta.author = input.author;
  }
  const compartments = input.compartments(resource);
  if (compartments.length > 0) {
    meta.compartment = compartments.map((reference) => ({ reference }));
  }
  return {
    resourceType,
    id: input.id,
    projectId: input.projectId,
    versionId: input.versionId,
    lastUpdated: input.lastUpdated,
    deleted: false,
    resource,
    // Decimals as the client wrote them (1.0 stays 1.0): hl7.org/fhir/R4/datatypes.html#decimal.
    content: stringifyKeepingDecimals(resource),
    compartments,
  };
}

/** Parses a stored JSON text; stored text was written by us, so it always parses. */
export function parseStored(content: string): Resource {
  return JSON.parse(content) as Resource;
}
