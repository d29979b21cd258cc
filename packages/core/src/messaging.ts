/**
 * Secure messaging on `Communication` (hl7.org/fhir/R4/communication.html), shared by the server's
 * messaging module and the app (docs/communications.md):
 *
 * - A thread starts with a Communication without `partOf`: its `topic` names the thread and its
 *   `subject` is the patient it is about. Every reply carries `partOf` = that first message (so a
 *   whole thread is one search, `part-of=Communication/{first}`, plus the first one) and
 *   `inResponseTo` = the message it answers.
 * - A message has `sender`, `recipient`s, `payload` (text and attachments whose `url` names a
 *   Binary), `sent` and status `completed`.
 * - Read receipts: one `read-receipt` extension per recipient who read it (`reader`, `time`),
 *   searchable as `read-by`; `received` is set once every recipient has read it. Unread for me:
 *   `recipient=Me/1&_filter=not (read-by eq Me/1)`.
 */
import type { Attachment, Communication, Extension, Reference } from './fhir-types.js';

/** The read receipt extension: `reader` (Reference) and `time` (dateTime), one per reader. */
export const READ_RECEIPT_URL = 'https://hearth.dev/fhir/StructureDefinition/read-receipt';

/** The id of the thread a message belongs to: its `partOf` Communication, else its own. */
export function threadIdOf(message: Communication): string | undefined {
  for (const ref of message.partOf ?? []) {
    const m = /^Communication\/([^/]+)$/.exec(ref.reference ?? '');
    if (m) {
      return m[1];
    }
  }
  return message.id;
}

/** "Patient/123" of each recipient. */
export function recipientsOf(message: Communication): string[] {
  return (message.recipient ?? []).map((r) => r.reference).filter((r): r is string => typeof r === 'string');
}

/** Who has read the message and when. */
export function readReceipts(message: Communication): { reader: string; time?: string }[] {
  const receipts: { reader: string; time?: string }[] = [];
  for (const ext of message.extension ?? []) {
    if (ext.url !== READ_RECEIPT_URL) {
      continue;
    }
    const reader = ext.extension?.find((e) => e.url === 'reader')?.valueReference?.reference;
    const time = ext.extension?.find((e) => e.url === 'time')?.valueDateTime;
    if (reader) {
      receipts.push({ reader, time });
    }
  }
  return receipts;
}

/** True when `reader` ("Patient/123") is a recipient who has not read the message yet. */
export function isUnreadBy(message: Communication, reader: string): boolean {
  return recipientsOf(message).includes(reader) && !readReceipts(message).some((r) => r.reader === reader);
}

/**
 * The message with a read receipt of `reader` at `time` (unchanged when there is one already);
 * `received` is set once every recipient has read it.
 */
export function withReadReceipt(message: Communication, reader: string, time: string): Communication {
  if (readReceipts(message).some((r) => r.reader === reader)) {
    return message;
  }
  const receipt: Extension = {
    url: READ_RECEIPT_URL,
    extension: [
      { url: 'reader', valueReference: { reference: reader } },
      { url: 'time', valueDateTime: time },
    ],
  };
  const next: Communication = { ...message, extension: [...(message.extension ?? []), receipt] };
  const readers = new Set(readReceipts(next).map((r) => r.reader));
  if (!next.received && recipientsOf(next).every((r) => readers.has(r))) {
    next.received = time;
  }
  return next;
}

export interface NewMessage {
  /** The patient the thread is about. */
  subject: Reference;
  sender: Reference;
  recipients: Reference[];
  /** The thread's title (its first message's topic.text). */
  topic: string;
  text?: string;
  attachments?: Attachment[];
  /** The message replied to; its thread is the one the reply joins. */
  inResponseTo?: Communication;
  /** When sent (default: now). */
  sent?: string;
}

/** A message ready to create: a new thread, or a reply in the thread of `inResponseTo`. */
export function buildMessage(input: NewMessage): Communication {
  const payload: NonNullable<Communication['payload']> = [];
  if (input.text?.trim()) {
    payload.push({ contentString: input.text.trim() });
  }
  for (const attachment of input.attachments ?? []) {
    payload.push({ contentAttachment: attachment });
  }
  const threadId = input.inResponseTo ? threadIdOf(input.inResponseTo) : undefined;
  return {
    resourceType: 'Communication',
    status: 'completed',
    subject: input.subject,
    topic: { text: input.topic },
    sender: input.sender,
    recipient: input.recipients,
    sent: input.sent ?? new Date().toISOString(),
    payload,
    ...(threadId ? { partOf: [{ reference: `Communication/${threadId}` }] } : {}),
    ...(input.inResponseTo?.id ? { inResponseTo: [{ reference: `Communication/${input.inResponseTo.id}` }] } : {}),
  };
}
