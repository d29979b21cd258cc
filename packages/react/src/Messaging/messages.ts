import {
  isUnreadBy,
  recipientsOf,
  threadIdOf,
  type Communication,
  type HearthClient,
  type Reference,
} from '@hearth/core';

/** One thread of the list: its first message's topic and patient, its latest message, my unread count. */
export interface ThreadSummary {
  id: string;
  topic: string;
  subject?: Reference;
  last: Communication;
  unread: number;
}

/** The search of the messages `me` ("Patient/1") has not read (docs/communications.md). */
export function unreadQuery(me: string): Record<string, string> {
  return { recipient: me, _filter: `not (read-by eq ${me})` };
}

/** How many messages addressed to `me` are unread. */
export async function countUnreadMessages(client: HearthClient, me: string): Promise<number> {
  const found = await client.search('Communication', { ...unreadQuery(me), _summary: 'count' }, { cache: 'no-cache' });
  return found.total ?? 0;
}

/** Messages read per list: the threads of the latest ones are listed. */
const LIST_WINDOW = 200;

/**
 * The threads `me` takes part in (sent or received a message), latest activity first, with how
 * many of each thread's messages `me` has not read.
 */
export async function loadThreads(client: HearthClient, me: string): Promise<ThreadSummary[]> {
  const found = await client.search(
    'Communication',
    { _filter: `sender eq ${me} or recipient eq ${me}`, _sort: '-sent', _count: String(LIST_WINDOW) },
    { cache: 'no-cache' },
  );
  const byThread = new Map<string, Communication[]>();
  for (const entry of found.entry ?? []) {
    const message = entry.resource as Communication | undefined;
    const id = message && threadIdOf(message);
    if (message && id) {
      byThread.set(id, [...(byThread.get(id) ?? []), message]);
    }
  }
  const threads: ThreadSummary[] = [];
  for (const [id, messages] of byThread) {
    const first = messages.find((m) => m.id === id) ?? messages[messages.length - 1];
    threads.push({
      id,
      topic: first.topic?.text ?? 'Message',
      subject: first.subject,
      last: messages[0],
      unread: messages.filter((m) => isUnreadBy(m, me)).length,
    });
  }
  return threads;
}

/** A thread's messages, oldest first: the first message and every reply (`part-of`). */
export async function loadThread(client: HearthClient, threadId: string): Promise<Communication[]> {
  const [first, replies] = await Promise.all([
    client.readResource('Communication', threadId, { cache: 'no-cache' }) as Promise<Communication>,
    client.searchResources(
      'Communication',
      { 'part-of': `Communication/${threadId}`, _sort: 'sent', _count: '1000' },
      { cache: 'no-cache' },
    ) as Promise<Communication[]>,
  ]);
  return [first, ...replies];
}

/** Records that `me` read the thread (Communication/{id}/$mark-read); returns how many messages changed. */
export async function markThreadRead(client: HearthClient, threadId: string): Promise<number> {
  const result = await client.post<{ parameter?: { name: string; valueInteger?: number }[] }>(
    client.fhirUrl('Communication', threadId, '$mark-read'),
    { resourceType: 'Parameters' },
  );
  return result.parameter?.find((p) => p.name === 'marked')?.valueInteger ?? 0;
}

/** Whom a reply goes to: everyone who sent or received a message of the thread, but me. */
export function replyRecipients(messages: Communication[], me: string): Reference[] {
  const people = new Set<string>();
  for (const message of messages) {
    for (const ref of [message.sender?.reference, ...recipientsOf(message)]) {
      if (ref && ref !== me) {
        people.add(ref);
      }
    }
  }
  return [...people].map((reference) => ({ reference }));
}
