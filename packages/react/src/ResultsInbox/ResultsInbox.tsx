import { Anchor, Badge, Button, Card, Group, Loader, Stack, Text } from '@mantine/core';
import { formatCodeableConcept, formatDateTime, getDisplayString, type Reference } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { observationFlag } from '../DiagnosticReportView/report.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { observationValue } from '../ResourceDescription/describe.js';
import { FlagBadge } from '../ResultEntryForm/ResultEntryForm.js';
import { acknowledge, loadInbox, type InboxItem } from './inbox.js';

export interface ResultsInboxProps {
  /** The practitioner whose unreviewed results to list (the signed-in one). */
  practitioner: Reference;
  /** Opens a report. */
  onOpen?: (reportId: string) => void;
  /** Called after each acknowledgement (e.g. to refresh an unread count). */
  onAcknowledged?: () => void;
}

/**
 * The results awaiting a practitioner's review: each report with its patient, date, and its
 * abnormal results flagged (critical ones first and in red); Acknowledge completes the report's
 * review Task, which takes it off the list for every client.
 */
export function ResultsInbox({ practitioner, onOpen, onAcknowledged }: ResultsInboxProps): ReactNode {
  const client = useHearth();
  const [version, setVersion] = useState(0);
  const found = useAsync(() => loadInbox(client, practitioner), `${practitioner.reference}/${version}`);
  if (found.error) return <OperationOutcomeAlert error={found.error} />;
  if (!found.data) return <Loader aria-label="Loading results inbox" />;
  if (!found.data.length) {
    return (
      <Text role="status" c="dimmed">
        No result awaits your review.
      </Text>
    );
  }
  return (
    <Stack gap="sm" role="list" aria-label="Unreviewed results">
      <Text role="status" size="sm">
        {found.data.length} result{found.data.length === 1 ? '' : 's'} to review
      </Text>
      {found.data.map((item) => (
        <InboxRow
          key={item.task.id}
          item={item}
          onOpen={onOpen}
          onDone={() => {
            setVersion((v) => v + 1);
            onAcknowledged?.();
          }}
        />
      ))}
    </Stack>
  );
}

const SEVERITY: Record<string, number> = { HH: 0, LL: 0, H: 1, L: 1, A: 1 };

function InboxRow({
  item,
  onOpen,
  onDone,
}: {
  item: InboxItem;
  onOpen?: (reportId: string) => void;
  onDone: () => void;
}): ReactNode {
  const client = useHearth();
  const action = useAction();
  const { task, report, patient } = item;
  const abnormal = item.observations
    .map((o) => ({ o, flag: observationFlag(o) }))
    .filter(({ flag }) => flag && flag !== 'N')
    .sort((a, b) => (SEVERITY[a.flag ?? ''] ?? 2) - (SEVERITY[b.flag ?? ''] ?? 2));
  const critical = abnormal.some(({ flag }) => flag === 'HH' || flag === 'LL');
  const title = report ? formatCodeableConcept(report.code) : (task.description ?? 'Result');
  return (
    <Card withBorder role="listitem" aria-label={`${title}${patient ? ` for ${getDisplayString(patient)}` : ''}`}>
      <Stack gap={6}>
        <Group justify="space-between" wrap="wrap" gap="xs">
          <div style={{ minWidth: 0 }}>
            <Group gap="xs" wrap="wrap">
              <Text fw={600}>{title}</Text>
              {critical && (
                <Badge color="red" variant="filled">
                  Critical
                </Badge>
              )}
              {!critical && abnormal.length > 0 && (
                <Badge color="orange" variant="light">
                  Abnormal
                </Badge>
              )}
            </Group>
            <Text size="sm" c="dimmed">
              {patient ? getDisplayString(patient) : (task.for?.display ?? task.for?.reference)} ·{' '}
              {formatDateTime(report?.issued ?? task.authoredOn)}
            </Text>
          </div>
          <Group gap="xs">
            {report?.id && onOpen && (
              <Anchor component="button" type="button" size="sm" onClick={() => onOpen(report.id as string)}>
                Open report
              </Anchor>
            )}
            <Button
              size="xs"
              loading={action.busy}
              onClick={() =>
                action.run(async () => {
                  await acknowledge(client, task);
                  onDone();
                })
              }
            >
              Acknowledge
            </Button>
          </Group>
        </Group>
        {abnormal.length > 0 ? (
          <Stack gap={2} aria-label="Abnormal results">
            {abnormal.map(({ o, flag }) => (
              <Group key={o.id} gap="xs" wrap="wrap">
                <FlagBadge flag={flag} />
                <Text size="sm">
                  {o.code?.text ?? formatCodeableConcept(o.code)} {observationValue(o)}
                </Text>
              </Group>
            ))}
          </Stack>
        ) : (
          <Text size="sm">All results within range</Text>
        )}
        <OperationOutcomeAlert error={action.error} />
      </Stack>
    </Card>
  );
}
