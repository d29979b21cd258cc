import { badRequest, fail, type Coding, type Resource } from '@hearth/core';

/** How a response is to be written: _pretty, _summary and _elements (the HTTP layer reads them from the query). */
export interface ResponseShape {
  pretty: boolean;
  summary?: string;
  elements?: string[];
}

/** What the shaper needs from the definitions: the summary elements of a type (hl7.org/fhir/R4/search.html#summary). */
export interface ElementShaper {
  summaryElements(resourceType: string): Set<string> | undefined;
  /** Top-level elements with min >= 1, always kept by _elements and _summary=text. */
  mandatoryElements(resourceType: string): Set<string> | undefined;
}

const SUBSETTED: Coding = {
  system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue',
  code: 'SUBSETTED',
  display: 'Resource encoded in summary mode',
};

const ALWAYS = new Set(['resourceType', 'id', 'meta']);

/** Applies _summary and _elements to one resource, marking it SUBSETTED when anything was left out. */
export function shapeResource(resource: Resource, shape: ResponseShape, shaper: ElementShaper): Resource {
  const summary = shape.summary;
  if (summary !== undefined && !['true', 'false', 'text', 'data', 'count'].includes(summary)) {
    fail(badRequest(`_summary must be one of true, false, text, data, count`, '_summary'));
  }
  let keep: ((key: string) => boolean) | undefined;
  const mandatory = shaper.mandatoryElements(resource.resourceType) ?? new Set<string>();
  if (summary === 'true') {
    const summaryElements = shaper.summaryElements(resource.resourceType) ?? new Set<string>();
    keep = (k) => ALWAYS.has(k) || summaryElements.has(k) || mandatory.has(k);
  } else if (summary === 'text') {
    keep = (k) => ALWAYS.has(k) || k === 'text' || mandatory.has(k);
  } else if (summary === 'data') {
    keep = (k) => k !== 'text';
  } else if (shape.elements && summary !== 'false') {
    const wanted = new Set(shape.elements.map((e) => e.split('.')[0].replace(/^[A-Z][A-Za-z]*\./, '')));
    keep = (k) => ALWAYS.has(k) || wanted.has(k) || mandatory.has(k) || (k.startsWith('_') && wanted.has(k.slice(1)));
  }
  if (!keep) {
    return resource;
  }
  const out: Record<string, unknown> = {};
  let removed = false;
  for (const [k, v] of Object.entries(resource)) {
    if (keep(k)) {
      out[k] = v;
    } else {
      removed = true;
    }
  }
  if (removed) {
    const meta = { ...((out.meta as Record<string, unknown>) ?? {}) };
    const tags = Array.isArray(meta.tag) ? [...(meta.tag as Coding[])] : [];
    if (!tags.some((t) => t.code === 'SUBSETTED')) {
      tags.push(SUBSETTED);
    }
    meta.tag = tags;
    out.meta = meta;
  }
  return out as Resource;
}
