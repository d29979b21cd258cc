/**
 * A clinical note as a Composition (hl7.org/fhir/R4/composition.html): the note's text is its
 * section's narrative; signing is an attestation (Composition.attester, mode legal, with the time
 * and the signer) and status final; a later edit is status amended with a new attestation. Each
 * save is a new version of the one resource, so its history keeps every signed text.
 */
import type { Composition, Reference } from '@hearth/core';

export const PROGRESS_NOTE = {
  coding: [{ system: 'http://loinc.org', code: '11506-3', display: 'Progress note' }],
  text: 'Progress note',
};

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const unescape = (s: string) =>
  s
    .replace(/<br\s*\/?>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Plain text as XHTML narrative (hl7.org/fhir/R4/narrative.html): a paragraph per blank-line-separated block. */
export function textToXhtml(text: string): string {
  const paragraphs = text
    .trim()
    .split(/\n\s*\n/)
    .map((p) => `<p>${escape(p.trim()).replace(/\n/g, '<br/>')}</p>`);
  return `<div xmlns="http://www.w3.org/1999/xhtml">${paragraphs.join('')}</div>`;
}

/** The plain text of narrative XHTML: paragraphs separated by blank lines. */
export function xhtmlToText(div: string | undefined): string {
  if (!div) return '';
  const paragraphs = [...div.matchAll(/<p>([\s\S]*?)<\/p>/g)].map((m) => unescape(m[1]));
  return paragraphs.length ? paragraphs.join('\n\n') : unescape(div).trim();
}

/** The note's text. */
export function noteText(note: Composition | undefined): string {
  return xhtmlToText(note?.section?.[0]?.text?.div);
}

export interface NoteInput {
  subject: Reference;
  encounter: Reference;
  author: Reference;
  text: string;
  /** Now, as a FHIR dateTime. */
  now: string;
}

/** A draft: status preliminary, not attested. */
export function draftNote(previous: Composition | undefined, input: NoteInput): Composition {
  return {
    ...previous,
    resourceType: 'Composition',
    status: 'preliminary',
    type: PROGRESS_NOTE,
    subject: input.subject,
    encounter: input.encounter,
    date: input.now,
    author: [input.author],
    title: 'Progress note',
    section: [{ title: 'Note', text: { status: 'additional', div: textToXhtml(input.text) } }],
    attester: undefined,
  };
}

/**
 * The note signed: status final, attested by its author now (legal: the signature of record); a
 * note already signed becomes amended, with the new signature after the earlier ones.
 */
export function signNote(previous: Composition | undefined, input: NoteInput): Composition {
  const signed = previous?.status === 'final' || previous?.status === 'amended';
  return {
    ...draftNote(previous, input),
    status: signed ? 'amended' : 'final',
    attester: [...(signed ? (previous?.attester ?? []) : []), { mode: 'legal', time: input.now, party: input.author }],
  };
}

/** Whether the note is signed (final or amended). */
export function isSigned(note: Composition | undefined): boolean {
  return note?.status === 'final' || note?.status === 'amended';
}
