import { Button, Group, Loader, Stack } from '@mantine/core';
import { OperationOutcomeError, type OperationOutcome, type Resource } from '@hearth/core';
import { useMemo, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useMetadata } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import { issuesByPath } from '../util/outcome.js';
import { prune } from '../util/values.js';
import { FormContext } from './context.js';
import { ElementsInput } from './ElementsInput.js';

export interface ResourceFormProps {
  /** The resource to edit, or `{ resourceType }` for a new one. */
  defaultValue: Resource;
  /** Saves the resource; a rejection with an OperationOutcome shows its issues at their fields. */
  onSubmit: (resource: Resource) => Promise<unknown> | void;
  onDelete?: (resource: Resource) => Promise<unknown> | void;
  /** An outcome to show (e.g. from a previous attempt). */
  outcome?: OperationOutcome;
  submitLabel?: string;
}

/**
 * A form generated from the type's definition: every element with the input its type calls for,
 * nested backbone elements, repeating elements, choice types, references searched as you type,
 * and codes from their value sets. Server validation messages appear at the field they concern.
 */
export function ResourceForm({
  defaultValue,
  onSubmit,
  onDelete,
  outcome,
  submitLabel = 'Save',
}: ResourceFormProps): ReactNode {
  const [value, setValue] = useState<Resource>(defaultValue);
  const metadata = useMetadata(value.resourceType);
  const { busy, error: failure, setError: setFailure, submit } = useAction();
  const shown = failure instanceof OperationOutcomeError ? failure.outcome : outcome;
  const issues = useMemo(() => issuesByPath(shown, value.resourceType), [shown, value.resourceType]);

  if (!metadata) {
    return <Loader aria-label="Loading definitions" />;
  }
  const schema = metadata.types[value.resourceType];
  if (!schema) {
    return <OperationOutcomeAlert error={new Error(`Unknown resource type: ${value.resourceType}`)} />;
  }
  // Issues that no field shows are listed above the buttons.
  const fieldPaths = new Set([...issues.keys()].filter(Boolean));
  const general = (shown?.issue ?? []).filter(
    (i) => i.severity !== 'information' && ![...(i.expression ?? []), ...(i.location ?? [])].length,
  );

  return (
    <FormContext.Provider value={{ metadata, issues }}>
      <form
        aria-label={`${value.resourceType} form`}
        noValidate
        onSubmit={submit(async () => {
          const cleaned = prune({ ...value }) ?? { resourceType: value.resourceType };
          await onSubmit({ ...cleaned, resourceType: value.resourceType, ...(value.id ? { id: value.id } : {}) });
        })}
      >
        <Stack gap="md">
          <ElementsInput
            schema={schema}
            value={value}
            onChange={(v) => setValue({ ...(v as Resource), resourceType: value.resourceType })}
            path={[]}
            depth={0}
          />
          {(general.length > 0 || (failure !== undefined && !(failure instanceof OperationOutcomeError))) && (
            <OperationOutcomeAlert
              error={failure}
              outcome={general.length ? { resourceType: 'OperationOutcome', issue: general } : undefined}
            />
          )}
          {fieldPaths.size > 0 && general.length === 0 && (
            <OperationOutcomeAlert outcome={shown} title="Please correct the marked fields" />
          )}
          <Group>
            <Button type="submit" loading={busy}>
              {submitLabel}
            </Button>
            {onDelete && value.id && (
              <Button
                color="red"
                variant="outline"
                onClick={async () => {
                  try {
                    await onDelete(value);
                  } catch (err) {
                    setFailure(err);
                  }
                }}
              >
                Delete
              </Button>
            )}
          </Group>
        </Stack>
      </form>
    </FormContext.Provider>
  );
}
