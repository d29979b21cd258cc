import { Alert, Anchor, Badge, Button, Group, Progress, Stack, Table, Text } from '@mantine/core';
import { formatDateTime, type Resource, type Subscription } from '@hearth/core';
import { OperationOutcomeAlert, useAsync, useHearth } from '@hearth/react';
import { useEffect, useState, type ReactNode } from 'react';
import { Link } from 'react-router';

/** How many of the newest attempts are shown. */
const SHOWN = 50;

interface AttemptEvent extends Resource {
  recorded?: string;
  outcome?: string;
  outcomeDesc?: string;
  entity?: { what?: { reference?: string } }[];
}

/**
 * A subscription's delivery attempts, newest first, from the AuditEvent each attempt records: when,
 * whether it was delivered, what about, and the answer. A row's resource can be sent again to this
 * subscription alone ($resend), to try a receiver out after fixing it.
 */
export function SubscriptionDeliveries({ subscription }: { subscription: Subscription }): ReactNode {
  const client = useHearth();
  const id = subscription.id as string;
  const [generation, setGeneration] = useState(0);
  const [resent, setResent] = useState<{ message?: string; error?: unknown }>({});
  // Websocket notifications are not recorded per attempt: nothing to read for them.
  const websocket = subscription.channel?.type === 'websocket';
  const attempts = useAsync<AttemptEvent[]>(
    websocket
      ? undefined
      : async () =>
          (await client.searchResources(
            'AuditEvent',
            { entity: `Subscription/${id}`, _sort: '-date', _count: String(SHOWN) },
            { cache: 'no-cache' },
          )) as AttemptEvent[],
    `${id}/${generation}`,
  );
  const refresh = () => setGeneration((g) => g + 1);
  // After a resend, the new attempt is recorded once it is answered: look again shortly.
  const [resentCount, setResentCount] = useState(0);
  useEffect(() => {
    if (resentCount === 0) return undefined;
    const timers = [1000, 3000].map((delay) => setTimeout(() => setGeneration((g) => g + 1), delay));
    return () => timers.forEach(clearTimeout);
  }, [resentCount]);

  if (websocket) {
    return (
      <Text c="dimmed">
        Websocket notifications go to the sockets bound to this subscription as they happen; they are not recorded as
        delivery attempts.
      </Text>
    );
  }

  const resend = async (reference: string) => {
    setResent({});
    try {
      const [type, resourceId] = reference.split('/');
      await client.post(client.fhirUrl(type, resourceId, '$resend'), {
        resourceType: 'Parameters',
        parameter: [{ name: 'subscription', valueString: `Subscription/${id}` }],
      });
      setResent({ message: `${reference} sent again.` });
      setResentCount((n) => n + 1);
    } catch (err) {
      setResent({ error: err });
    }
  };

  const list = attempts.data ?? [];
  const delivered = list.filter((e) => e.outcome === '0').length;
  const failed = list.length - delivered;
  return (
    <Stack>
      <Group justify="space-between">
        <Text size="sm">
          {subscription.channel?.type} → <code>{subscription.channel?.endpoint ?? '(no endpoint)'}</code> · criteria{' '}
          <code>{subscription.criteria}</code>
        </Text>
        <Button variant="subtle" size="compact-sm" onClick={refresh} loading={attempts.loading}>
          Refresh
        </Button>
      </Group>
      {list.length > 0 && (
        <Stack gap={4}>
          <Text size="sm" aria-label="Delivery summary">
            {list.length === 1 ? 'Last attempt' : `Last ${list.length} attempts`}: {delivered} delivered, {failed}{' '}
            failed
          </Text>
          <Progress.Root size="lg" aria-hidden>
            <Progress.Section value={(delivered / list.length) * 100} color="green" />
            <Progress.Section value={(failed / list.length) * 100} color="red" />
          </Progress.Root>
        </Stack>
      )}
      {resent.message && (
        <Alert color="green" role="status" withCloseButton onClose={() => setResent({})}>
          {resent.message}
        </Alert>
      )}
      {resent.error !== undefined && <OperationOutcomeAlert error={resent.error} />}
      {attempts.error !== undefined && <OperationOutcomeAlert error={attempts.error} />}
      <Table aria-label="Subscription deliveries" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={200}>When</Table.Th>
            <Table.Th w={100}>Outcome</Table.Th>
            <Table.Th>Resource</Table.Th>
            <Table.Th>Answer</Table.Th>
            <Table.Th w={90} />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {list.map((event) => {
            const about = event.entity
              ?.map((e) => e.what?.reference)
              .find((r): r is string => !!r && r !== `Subscription/${id}`);
            return (
              <Table.Tr key={event.id}>
                <Table.Td>{formatDateTime(event.recorded)}</Table.Td>
                <Table.Td>
                  {event.outcome === '0' ? <Badge color="green">delivered</Badge> : <Badge color="red">failed</Badge>}
                </Table.Td>
                <Table.Td>
                  {about ? (
                    <Anchor component={Link} to={`/${about}`}>
                      {about}
                    </Anchor>
                  ) : (
                    '-'
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="xs" style={{ whiteSpace: 'pre-wrap' }}>
                    {event.outcomeDesc ?? ''}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {about && (
                    <Button
                      variant="subtle"
                      size="compact-xs"
                      aria-label={`Resend ${about}`}
                      onClick={() => void resend(about)}
                    >
                      Resend
                    </Button>
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
      {!attempts.loading && list.length === 0 && !attempts.error && (
        <Text c="dimmed">No delivery attempts yet: they appear here once a change matches the criteria.</Text>
      )}
    </Stack>
  );
}
