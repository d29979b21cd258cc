import type { OperationOutcome } from '@hearth/core';

export interface BundleEntryText {
  fullUrl: string;
  /** The resource's JSON text, spliced in as stored. */
  content: string;
  mode: 'match' | 'include' | 'outcome';
}

export interface SearchBundle {
  total?: number;
  links: { relation: string; url: string }[];
  entries: BundleEntryText[];
  outcome?: OperationOutcome;
}

/**
 * The searchset Bundle (hl7.org/fhir/R4/bundle.html) as JSON text, built around the stored
 * resources' text so that no resource is parsed or serialised again.
 */
export function bundleText(bundle: SearchBundle): string {
  const parts: string[] = [`{"resourceType":"Bundle","type":"searchset"`];
  if (bundle.total !== undefined) {
    parts.push(`,"total":${bundle.total}`);
  }
  if (bundle.links.length > 0) {
    parts.push(`,"link":${JSON.stringify(bundle.links)}`);
  }
  const entries = bundle.entries.map(
    (e) => `{"fullUrl":${JSON.stringify(e.fullUrl)},"resource":${e.content},"search":{"mode":"${e.mode}"}}`,
  );
  if (bundle.outcome) {
    entries.push(`{"resource":${JSON.stringify(bundle.outcome)},"search":{"mode":"outcome"}}`);
  }
  if (entries.length > 0) {
    parts.push(`,"entry":[${entries.join(',')}]`);
  }
  parts.push('}');
  return parts.join('');
}
