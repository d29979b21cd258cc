import { Anchor, Box, Group, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import {
  buildMessage,
  isUnreadBy,
  readReceipts,
  recipientsOf,
  threadIdOf,
  formatDateTime,
  type Attachment,
  type Communication,
} from '@hearth/core';
import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { useHearth } from '../provider/HearthProvider.js';
import { loadThread, markThreadRead, replyRecipients } from './messages.js';
import { MessageComposer } from './MessageComposer.js';
import { useMessageStream } from './use-message-stream.js';

/** Dispatched on window when messages were sent or read here (unread counts elsewhere recount). */
export const MESSAGES_CHANGED = 'hearth:messages-changed';

export interface MessageThreadProps {
  threadId: string;
  /** The signed-in person ("Patient/1"): their messages on the right, receipts, marked read on opening. */
  me: string;
}

/**
 * One thread: its messages oldest first (text, attachments to download, time, sender, "Read" under
 * mine once every recipient has read it), new ones arriving live, and a composer for the reply.
 * Opening it marks it read (Communication/$mark-read).
 */
export function MessageThread({ threadId, me }: MessageThreadProps): ReactNode {
  const client = useHearth();
  const [messages, setMessages] = useState<Communication[] | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);

  const markRead = useCallback(
    async (list: Communication[]) => {
      if (list.some((m) => isUnreadBy(m, me))) {
        await markThreadRead(client, threadId);
        window.dispatchEvent(new Event(MESSAGES_CHANGED));
      }
    },
    [client, threadId, me],
  );

  const reload = useCallback(async () => {
    try {
      const list = await loadThread(client, threadId);
      setMessages(list);
      setFailure(undefined);
      await markRead(list);
    } catch (err) {
      setFailure(err);
    }
  }, [client, threadId, markRead]);

  useEffect(() => {
    setMessages(undefined);
    void reload();
  }, [reload]);

  // A message of this thread to me, live: shown, and read since the thread is open.
  useMessageStream(me, (message) => {
    if (threadIdOf(message) === threadId) {
      void reload();
    }
  });

  if (failure !== undefined && !messages) {
    return <OperationOutcomeAlert error={failure} title="Could not open the thread" />;
  }
  if (!messages) {
    return <Loader aria-label="Loading messages" />;
  }
  const first = messages[0];

  async function reply(text: string, attachments: Attachment[]): Promise<void> {
    const last = messages?.[messages.length - 1] ?? first;
    const sent = await client.createResource(
      buildMessage({
        subject: first.subject ?? { reference: me },
        sender: { reference: me },
        recipients: replyRecipients(messages ?? [], me),
        topic: first.topic?.text ?? 'Message',
        text,
        attachments,
        inResponseTo: last,
      }),
    );
    setMessages((list) => [...(list ?? []), sent]);
    window.dispatchEvent(new Event(MESSAGES_CHANGED));
  }

  return (
    <Stack gap="sm">
      <Box>
        <Title order={2} size="h3">
          {first.topic?.text ?? 'Message'}
        </Title>
        {first.subject && (
          <Group gap="xs">
            <Text size="sm" c="dimmed">
              About
            </Text>
            <ResourceBadge value={first.subject} />
          </Group>
        )}
      </Box>
      <Stack gap="xs" component="ol" aria-label="Messages" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {messages.map((message) => (
          <MessageBubble key={message.id} message={message} mine={message.sender?.reference === me} />
        ))}
      </Stack>
      <MessageComposer label="Reply" onSend={reply} securityContext={first.subject} />
    </Stack>
  );
}

function MessageBubble({ message, mine }: { message: Communication; mine: boolean }): ReactNode {
  const client = useHearth();
  const readers = new Set(readReceipts(message).map((r) => r.reader));
  const readByAll = recipientsOf(message).every((r) => readers.has(r));
  return (
    <Box component="li" style={{ display: 'flex', justifyContent: mine ? 'flex-end' : 'flex-start' }}>
      <Paper
        withBorder
        p="xs"
        radius="md"
        maw="85%"
        bg={mine ? 'var(--mantine-color-ember-light)' : undefined}
        aria-label={mine ? 'Sent message' : 'Received message'}
      >
        {!mine && message.sender && <ResourceBadge value={message.sender} link={false} avatar={false} />}
        {message.payload?.map((part, i) =>
          part.contentString ? (
            <Text key={i} size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
              {part.contentString}
            </Text>
          ) : part.contentAttachment?.url ? (
            <AttachmentLink key={i} attachment={part.contentAttachment} download={(url) => client.download(url)} />
          ) : null,
        )}
        <Text size="xs" c="dimmed">
          {formatDateTime(message.sent)}
          {mine && readByAll ? ' · Read' : ''}
        </Text>
      </Paper>
    </Box>
  );
}

function AttachmentLink({
  attachment,
  download,
}: {
  attachment: Attachment;
  download: (url: string) => Promise<Blob>;
}): ReactNode {
  return (
    <Anchor
      component="button"
      type="button"
      size="sm"
      onClick={async () => {
        const blob = await download(attachment.url as string);
        window.open(URL.createObjectURL(blob), '_blank');
      }}
    >
      Attachment: {attachment.title ?? attachment.contentType ?? 'file'}
    </Anchor>
  );
}
