import { Button, Group, Stack, Textarea } from '@mantine/core';
import type { Attachment, Reference } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { AttachmentInput } from '../AttachmentInput/AttachmentInput.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';

export interface MessageComposerProps {
  /** Sends the text and attachments; the composer clears once it resolves. */
  onSend: (text: string, attachments: Attachment[]) => Promise<void>;
  /** The patient the attachments are about: their Binary's security context. */
  securityContext?: Reference;
  label?: string;
}

/** A message: text and any number of attached files (each uploaded as a Binary first). */
export function MessageComposer({ onSend, securityContext, label = 'Message' }: MessageComposerProps): ReactNode {
  const [text, setText] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<unknown>(undefined);
  const empty = !text.trim() && attachments.length === 0;

  async function send(): Promise<void> {
    setSending(true);
    setFailure(undefined);
    try {
      await onSend(text, attachments);
      setText('');
      setAttachments([]);
    } catch (err) {
      setFailure(err);
    } finally {
      setSending(false);
    }
  }

  return (
    <Stack
      gap="xs"
      component="form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!empty) {
          void send();
        }
      }}
    >
      <Textarea
        label={label}
        autosize
        minRows={2}
        maxRows={8}
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !empty) {
            e.preventDefault();
            void send();
          }
        }}
      />
      {attachments.map((attachment, i) => (
        <AttachmentInput
          key={attachment.url ?? i}
          label={`Attachment ${i + 1}`}
          value={attachment}
          securityContext={securityContext}
          onChange={(next) =>
            setAttachments((list) => (next ? list.map((a, j) => (j === i ? next : a)) : list.filter((_, j) => j !== i)))
          }
        />
      ))}
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <AttachmentInput
          key={attachments.length}
          label="Attach a file"
          securityContext={securityContext}
          onChange={(next) => next && setAttachments((list) => [...list, next])}
        />
        <Button type="submit" loading={sending} disabled={empty}>
          Send
        </Button>
      </Group>
      {failure !== undefined && <OperationOutcomeAlert error={failure} title="Not sent" />}
    </Stack>
  );
}
