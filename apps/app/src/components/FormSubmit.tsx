import { Button, type ButtonProps } from '@mantine/core';
import { OperationOutcomeAlert } from '@hearth/react';
import type { ReactNode } from 'react';

/** The end of a form run by `useAction`: why its last submit failed, then its submit button, busy while it runs. */
export function FormSubmit({
  busy,
  error,
  children,
  ...button
}: { busy: boolean; error: unknown; children: ReactNode } & ButtonProps): ReactNode {
  return (
    <>
      <OperationOutcomeAlert error={error} />
      <Button type="submit" loading={busy} {...button}>
        {children}
      </Button>
    </>
  );
}
