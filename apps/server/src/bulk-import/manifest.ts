/**
 * The Bulk Data import manifest (hl7.org/fhir/uv/bulkdata/ "Bulk Data $import", as the Argonaut/SMART
 * proposal shapes it): a Parameters resource with inputFormat (application/fhir+ndjson), inputSource
 * (where the data comes from) and one `input` per file, each with its `type` and `url`.
 */
import { badRequest, fail } from '@hearth/core';
import { isResourceTypeName } from '../search/resource-types.js';

export const NDJSON_FORMATS = ['application/fhir+ndjson', 'application/ndjson', 'ndjson'];

export interface ImportInput {
  type: string;
  /** An absolute http(s) URL, or a Binary of this server (`Binary/{id}` or its absolute URL). */
  url: string;
}

export interface ImportManifest {
  inputFormat: string;
  inputSource?: string;
  inputs: ImportInput[];
}

interface Part {
  name?: unknown;
  valueString?: unknown;
  valueCode?: unknown;
  valueUri?: unknown;
  valueUrl?: unknown;
  part?: Part[];
}

const text = (p: Part | undefined): unknown => p?.valueString ?? p?.valueCode ?? p?.valueUri ?? p?.valueUrl;

/** Reads and checks the manifest; 400 naming the parameter at fault. */
export function parseManifest(body: unknown): ImportManifest {
  const params = body as { resourceType?: unknown; parameter?: unknown } | undefined;
  if (!params || typeof params !== 'object' || Buffer.isBuffer(params) || params.resourceType !== 'Parameters') {
    fail(badRequest('$import takes a Parameters manifest (inputFormat, inputSource, input with type and url)'));
  }
  const list = Array.isArray(params.parameter) ? (params.parameter as Part[]) : [];
  const format = text(list.find((p) => p.name === 'inputFormat')) ?? 'application/fhir+ndjson';
  if (typeof format !== 'string' || !NDJSON_FORMATS.includes(format)) {
    fail(badRequest(`inputFormat ${String(format)} is not supported (use application/fhir+ndjson)`, 'inputFormat'));
  }
  const source = text(list.find((p) => p.name === 'inputSource'));
  if (source !== undefined && typeof source !== 'string') fail(badRequest('inputSource must be a uri', 'inputSource'));
  const inputs = list
    .map((p, i) => ({ p, i }))
    .filter(({ p }) => p.name === 'input')
    .map(({ p, i }): ImportInput => {
      const where = `Parameters.parameter[${i}]`;
      const type = text(p.part?.find((x) => x.name === 'type'));
      const url = text(p.part?.find((x) => x.name === 'url'));
      if (typeof type !== 'string' || !isResourceTypeName(type)) {
        fail(badRequest(`input.type ${String(type)} is not a resource type`, `${where}.part[type]`));
      }
      if (typeof url !== 'string' || url === '') fail(badRequest('input.url is required', `${where}.part[url]`));
      if (!/^https?:\/\//i.test(url) && !/^Binary\/[A-Za-z0-9\-.]{1,64}$/.test(url)) {
        fail(badRequest(`input.url ${url}: an http(s) URL or Binary/{id}`, `${where}.part[url]`));
      }
      return { type, url };
    });
  if (inputs.length === 0) fail(badRequest('The manifest names no input', 'input'));
  return { inputFormat: format, ...(source ? { inputSource: source } : {}), inputs };
}
