import { Anchor, Button, FileButton, Group, Input, Progress, Stack, Text } from '@mantine/core';
import type { Attachment, Reference } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';

export interface AttachmentInputProps {
  label?: string;
  value?: Attachment;
  onChange: (value: Attachment | undefined) => void;
  error?: string;
  /** Accepted file types (the file input's `accept`), e.g. 'image/*'. */
  accept?: string;
  /** The resource whose access rules the uploaded Binary follows (e.g. the patient it is about). */
  securityContext?: Reference;
}

/** Uploads a file as a Binary, with a progress bar, and keeps an Attachment pointing at it. */
export function AttachmentInput({
  label = 'Attachment',
  value,
  onChange,
  error,
  accept,
  securityContext,
}: AttachmentInputProps): ReactNode {
  const client = useHearth();
  const [progress, setProgress] = useState<number | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);

  async function upload(file: File | null): Promise<void> {
    if (!file) {
      return;
    }
    setFailure(undefined);
    setProgress(0);
    try {
      const attachment = await client.createAttachment({
        contentType: file.type || 'application/octet-stream',
        data: file,
        filename: file.name,
        ...(securityContext ? { securityContext } : {}),
        onProgress: (e) => setProgress(e.total ? Math.round((e.loaded / e.total) * 100) : 0),
      });
      onChange({ ...attachment, size: file.size });
    } catch (err) {
      setFailure(err);
    } finally {
      setProgress(undefined);
    }
  }

  return (
    <Input.Wrapper label={label} error={error}>
      <Stack gap={4}>
        {value?.url && (
          <Group gap="xs">
            <Anchor
              component="button"
              type="button"
              size="sm"
              onClick={async () => {
                const blob = await client.download(value.url as string);
                window.open(URL.createObjectURL(blob), '_blank');
              }}
            >
              {value.title ?? value.url}
            </Anchor>
            <Text size="xs" c="dimmed">
              {value.contentType}
            </Text>
            <Button variant="subtle" size="compact-xs" color="red" onClick={() => onChange(undefined)}>
              Remove
            </Button>
          </Group>
        )}
        <FileButton onChange={upload} accept={accept}>
          {(props) => (
            <Button {...props} variant="default" size="xs" w="fit-content" loading={progress !== undefined}>
              {value?.url ? 'Replace file' : 'Upload file'}
            </Button>
          )}
        </FileButton>
        {progress !== undefined && <Progress value={progress} aria-label="Upload progress" size="sm" animated />}
        {failure !== undefined && <OperationOutcomeAlert error={failure} title="Upload failed" />}
      </Stack>
    </Input.Wrapper>
  );
}
