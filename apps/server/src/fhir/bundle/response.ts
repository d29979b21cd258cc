import { STATUS_CODES } from 'node:http';
import type { EntryResult } from './entry.js';

export type ResponseBody = 'representation' | 'minimal' | 'OperationOutcome';

/**
 * The batch-response or transaction-response Bundle as JSON text, entries in request order.
 * Resources are spliced in as the stored text, never parsed and re-serialised.
 */
export function responseBundleText(
  type: 'batch-response' | 'transaction-response',
  results: EntryResult[],
  prefer: ResponseBody,
): string {
  const named = new Set<string>();
  const entries = results.map((r) => {
    const parts: string[] = [];
    // A fullUrl names one entry of a Bundle (bdl-7): an entry answering for a resource an earlier
    // one already named (a PUT, then a GET of it) goes without; its position and location say which.
    if (r.fullUrl && !named.has(r.fullUrl)) {
      named.add(r.fullUrl);
      parts.push(`"fullUrl":${JSON.stringify(r.fullUrl)}`);
    }
    if (r.body && prefer === 'representation') {
      parts.push(`"resource":${r.body}`);
    }
    const response: Record<string, unknown> = { status: `${r.status} ${STATUS_CODES[r.status] ?? ''}`.trim() };
    if (r.location) {
      response.location = r.location;
    }
    if (r.etag) {
      response.etag = r.etag;
    }
    if (r.lastModified) {
      response.lastModified = r.lastModified;
    }
    if (r.outcome) {
      response.outcome = r.outcome;
    }
    parts.push(`"response":${JSON.stringify(response)}`);
    return `{${parts.join(',')}}`;
  });
  return `{"resourceType":"Bundle","type":"${type}","timestamp":"${new Date().toISOString()}","entry":[${entries.join(',')}]}`;
}
