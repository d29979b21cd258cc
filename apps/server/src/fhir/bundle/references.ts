// Resolving references inside a transaction: hl7.org/fhir/R4/bundle.html#references and
// http.html#trules (urn:uuid: placeholders, fullUrls and conditional references).

/** An object holding a reference (a Reference datatype); rewritten in place. */
export interface ReferenceHolder {
  reference: string;
}

/** An Attachment (or any element) whose `url` is a placeholder, e.g. a DocumentReference pointing at a Binary. */
export interface UrlHolder {
  url: string;
}

/**
 * Collects every object with a string `reference` in a resource (contained resources included),
 * and, into `urls`, objects whose `url` is a urn:uuid placeholder.
 */
export function collectReferenceHolders(value: unknown, out: ReferenceHolder[], urls?: UrlHolder[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'object' && item !== null) {
        collectReferenceHolders(item, out, urls);
      }
    }
    return;
  }
  if (typeof value !== 'object' || value === null) {
    return;
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj.reference === 'string') {
    out.push(obj as unknown as ReferenceHolder);
  }
  if (urls && typeof obj.url === 'string' && obj.url.startsWith('urn:uuid:')) {
    urls.push(obj as unknown as UrlHolder);
  }
  for (const key in obj) {
    const child = obj[key];
    if (typeof child === 'object' && child !== null) {
      collectReferenceHolders(child, out, urls);
    }
  }
}

/** `Patient?identifier=...`: a search that must match exactly one resource. */
export function isConditionalReference(reference: string): boolean {
  return /^[A-Z][A-Za-z]+\?./.test(reference);
}

/** A placeholder that only means something inside the Bundle. */
export function isPlaceholder(reference: string): boolean {
  return reference.startsWith('urn:uuid:') || reference.startsWith('urn:oid:');
}

/** The same condition however its parameters are ordered: 'Patient?a=1&b=2' equals 'Patient?b=2&a=1'. */
export function conditionKey(resourceType: string, query: string): string {
  const pairs = [...new URLSearchParams(query)].map(([k, v]) => `${k}=${v}`).sort();
  return `${resourceType}?${pairs.join('&')}`;
}

/** Replaces placeholders used as parameter values of a query ('subject=urn:uuid:...'). */
export function substituteQuery(query: string, fullUrls: Map<string, string>): string {
  if (!query.includes('urn:') && fullUrls.size === 0) {
    return query;
  }
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) {
        return pair;
      }
      let value: string;
      try {
        value = decodeURIComponent(pair.slice(eq + 1));
      } catch {
        return pair;
      }
      const replaced = fullUrls.get(value);
      return replaced ? `${pair.slice(0, eq + 1)}${encodeURIComponent(replaced)}` : pair;
    })
    .join('&');
}
