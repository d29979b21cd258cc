import { Badge, Group, Stack, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import type { ReactNode } from 'react';
import { formatDateTime } from '@hearth/core';
import type { ThreadSummary } from './messages.js';

export interface ThreadListProps {
  threads: ThreadSummary[];
  /** The open thread, highlighted. */
  selected?: string;
  onOpen: (threadId: string) => void;
}

/** The message threads, latest first: topic, latest message, time, and an unread badge. */
export function ThreadList({ threads, selected, onOpen }: ThreadListProps): ReactNode {
  if (threads.length === 0) {
    return (
      <Text c="dimmed" size="sm">
        No messages yet.
      </Text>
    );
  }
  return (
    <Stack
      gap={4}
      component="ul"
      role="list"
      aria-label="Message threads"
      style={{ listStyle: 'none', padding: 0, margin: 0 }}
    >
      {threads.map((thread) => {
        const preview = thread.last.payload?.find((p) => p.contentString)?.contentString ?? 'Attachment';
        return (
          <li key={thread.id}>
            <UnstyledButton
              onClick={() => onOpen(thread.id)}
              aria-current={thread.id === selected ? 'true' : undefined}
              p="xs"
              w="100%"
              style={{
                borderRadius: 'var(--mantine-radius-sm)',
                background: thread.id === selected ? 'var(--mantine-color-ember-light)' : undefined,
              }}
            >
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <Text fw={thread.unread > 0 ? 700 : 500} size="sm" truncate>
                  {thread.topic}
                </Text>
                {thread.unread > 0 && (
                  <Badge size="sm" color="red" circle={thread.unread < 10}>
                    {thread.unread}
                    <VisuallyHidden> unread</VisuallyHidden>
                  </Badge>
                )}
              </Group>
              <Text size="xs" c="dimmed" truncate>
                {preview}
              </Text>
              <Text size="xs" c="dimmed">
                {formatDateTime(thread.last.sent)}
              </Text>
            </UnstyledButton>
          </li>
        );
      })}
    </Stack>
  );
}
