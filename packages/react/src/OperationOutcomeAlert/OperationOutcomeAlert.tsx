import { Alert, List } from '@mantine/core';
import { OperationOutcomeError, type OperationOutcome } from '@hearth/core';
import type { ReactNode } from 'react';
import { errorMessage } from '../provider/hooks.js';
import { issueExpressions, issueText } from '../util/outcome.js';

export interface OperationOutcomeAlertProps {
  /** An OperationOutcome, or any error (an OperationOutcomeError shows its outcome). */
  error?: unknown;
  outcome?: OperationOutcome;
  title?: string;
}

/** Shows what went wrong: each issue of the server's OperationOutcome, with where it applies. */
export function OperationOutcomeAlert({ error, outcome, title = 'Error' }: OperationOutcomeAlertProps): ReactNode {
  const o = outcome ?? (error instanceof OperationOutcomeError ? error.outcome : undefined);
  if (!o && !error) {
    return null;
  }
  const issues = (o?.issue ?? []).filter((i) => i.severity !== 'information');
  return (
    <Alert color="red" title={title} role="alert" variant="light">
      {issues.length > 1 ? (
        <List size="sm">
          {issues.map((issue, i) => (
            <List.Item key={i}>
              {issueText(issue)}
              {issueExpressions(issue).length ? ` (${issueExpressions(issue).join(', ')})` : ''}
            </List.Item>
          ))}
        </List>
      ) : issues.length === 1 ? (
        <>
          {issueText(issues[0])}
          {issueExpressions(issues[0]).length ? ` (${issueExpressions(issues[0]).join(', ')})` : ''}
        </>
      ) : (
        errorMessage(error ?? o)
      )}
    </Alert>
  );
}
