/**
 * Rules of single data types beyond their structure and invariants, run on each value of the
 * type: the narrative's XHTML, an Attachment's size and hash, a Coding's system.
 */
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';
import { checkAttachment } from './attachments.js';
import { checkNarrativeXhtml, type NarrativeLinks } from './narrative.js';

type Json = Record<string, unknown>;

/** An absolute URI starts with a scheme (RFC 3986 section 4.3). */
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export function checkTypeRules(
  type: string,
  value: Json,
  path: string,
  issues: OperationOutcomeIssue[],
  links?: NarrativeLinks,
): void {
  switch (type) {
    case 'Narrative':
      if (typeof value.div === 'string') {
        checkNarrativeXhtml(value.div, `${path}.div`, issues, links);
      }
      break;
    case 'Attachment':
      checkAttachment(value, path, issues);
      break;
    case 'Coding':
      // Coding.system is a URI that identifies the code system (datatypes.html#Coding), never a local name.
      if (typeof value.system === 'string' && !ABSOLUTE_URI.test(value.system)) {
        issues.push(
          createIssue('value', `Coding.system must be an absolute URI, not "${value.system}"`, `${path}.system`),
        );
      }
      break;
  }
}
