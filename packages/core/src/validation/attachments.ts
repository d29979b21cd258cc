/**
 * Attachment (hl7.org/fhir/R4/datatypes.html#Attachment): `size` is the number of bytes of the
 * content and `hash` its SHA-1, base64-encoded; when `data` carries the content both must agree.
 */
import { sha1 } from '@noble/hashes/legacy';
import type { OperationOutcomeIssue } from '../fhir-types.js';
import { createIssue } from '../outcome.js';

type Json = Record<string, unknown>;

const WHITESPACE = /[\s]/g;

function decodedLength(base64: string): number {
  const compact = base64.replace(WHITESPACE, '');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return (compact.length / 4) * 3 - padding;
}

function decode(base64: string): Uint8Array {
  const binary = atob(base64.replace(WHITESPACE, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary);
}

/** Checks size and hash against data; `data` has passed the base64Binary check already when valid. */
export function checkAttachment(attachment: Json, path: string, issues: OperationOutcomeIssue[]): void {
  const data = attachment.data;
  if (typeof data !== 'string' || data.length === 0) {
    return;
  }
  let length: number;
  try {
    length = decodedLength(data);
    if (!Number.isInteger(length)) {
      return; // not base64: the primitive check reports it
    }
  } catch {
    return;
  }
  if (typeof attachment.size === 'number' && attachment.size !== length) {
    issues.push(
      createIssue('value', `Attachment size is ${attachment.size} but the data has ${length} bytes`, `${path}.size`),
    );
  }
  if (typeof attachment.hash === 'string') {
    let actual: string;
    try {
      actual = toBase64(sha1(decode(data)));
    } catch {
      return;
    }
    if (actual !== attachment.hash.replace(WHITESPACE, '')) {
      issues.push(
        // A warning: R4's own DiagnosticReport-example-pgx gives a hex digest of the base64 text.
        createIssue(
          'value',
          `Attachment hash is not the SHA-1 of the data (that is ${actual})`,
          `${path}.hash`,
          'warning',
        ),
      );
    }
  }
}
