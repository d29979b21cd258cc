import { Button, Code, Group, JsonInput, ScrollArea, Stack } from '@mantine/core';
import { stableStringify, type Resource } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useAction } from '../provider/use-action.js';

export interface JsonViewProps {
  value: unknown;
  maxHeight?: number;
}

/** Read-only pretty JSON. */
export function JsonView({ value, maxHeight = 600 }: JsonViewProps): ReactNode {
  return (
    <ScrollArea.Autosize mah={maxHeight} type="auto">
      <Code block aria-label="JSON" data-testid="json-view">
        {JSON.stringify(value, null, 2)}
      </Code>
    </ScrollArea.Autosize>
  );
}

export interface JsonEditorProps {
  defaultValue: Resource | Record<string, unknown>;
  /** Called with the parsed JSON; a rejection's OperationOutcome is shown. */
  onSubmit: (value: Resource) => Promise<unknown> | void;
  submitLabel?: string;
  label?: string;
}

/** Edits a resource as JSON text: checked for syntax as you type, formatted on demand. */
export function JsonEditor({
  defaultValue,
  onSubmit,
  submitLabel = 'Save',
  label = 'Resource JSON',
}: JsonEditorProps): ReactNode {
  const [text, setText] = useState(() => stableStringify(defaultValue, 2));
  const { busy, error, run } = useAction();
  let parsed: Resource | undefined;
  let syntax: string | undefined;
  try {
    parsed = JSON.parse(text) as Resource;
  } catch (err) {
    syntax = (err as Error).message;
  }
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!parsed) return;
        const value = parsed;
        await run(async () => {
          await onSubmit(value);
        });
      }}
    >
      <Stack gap="sm">
        <JsonInput
          label={label}
          value={text}
          onChange={setText}
          autosize
          minRows={12}
          maxRows={40}
          error={syntax}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 13 } }}
        />
        <OperationOutcomeAlert error={error} />
        <Group>
          <Button type="submit" disabled={!parsed} loading={busy}>
            {submitLabel}
          </Button>
          <Button
            variant="default"
            disabled={!parsed}
            onClick={() => parsed && setText(JSON.stringify(parsed, null, 2))}
          >
            Format
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
