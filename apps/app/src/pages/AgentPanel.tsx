import {
  Alert,
  Anchor,
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  Loader,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Textarea,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import {
  formatDateTime,
  getDisplayString,
  type Agent,
  type AgentChannel,
  type Bot,
  type Endpoint,
  type OperationOutcome,
  type Parameters,
} from '@hearth/core';
import { OperationOutcomeAlert, useAction, useAsync, useHearth, useResource, type AsyncState } from '@hearth/react';
import { Fragment, useEffect, useId, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ScrollRegion } from '../components/ScrollRegion.js';
import {
  byChannel,
  firstLine,
  outcomeOf,
  readableText,
  readMessages,
  readStatus,
  type AgentLogEntry,
} from './agent-messages.js';

/** The status and the messages are read again this often while the page is open. */
export const AGENT_POLL_MS = 5000;
const ALL = '*';
const HL7 = 'x-application/hl7-v2+er7';

/**
 * An on-premises agent at a glance: whether it is connected (its version, its last heartbeat), its
 * channels (address, bot), the last messages of each channel with their answers ($messages), and
 * what can be asked of it: reload its configuration, push a message out through it.
 */
export function AgentPanel({ agent }: { agent: Agent }): ReactNode {
  const client = useHearth();
  const id = agent.id as string;
  const [tick, setTick] = useState(0);
  const refresh = () => setTick((n) => n + 1);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), AGENT_POLL_MS);
    return () => clearInterval(timer);
  }, []);
  const [channel, setChannel] = useState<string>(ALL);
  const status = useAsync(
    () => client.get<Parameters>(client.fhirUrl('Agent', id, '$status'), { cache: 'no-cache' }),
    `${id}/${tick}`,
  );
  const messages = useAsync(() => {
    const url = new URL(client.fhirUrl('Agent', id, '$messages'));
    if (channel !== ALL) url.searchParams.set('channel', channel);
    return client.get<Parameters>(url, { cache: 'no-cache' });
  }, `${id}/${channel}/${tick}`);
  const channels = agent.channel ?? [];
  const names = channels.map((c) => c.name);
  const groups = byChannel(
    channel === ALL ? names : [channel],
    readMessages(messages.data).filter((m) => channel === ALL || m.channel === channel),
  );

  return (
    <Stack>
      <StatusCard status={status} onRefresh={refresh} />
      <ReloadConfig agentId={id} onDone={refresh} />

      <Title order={3}>Channels</Title>
      {channels.length === 0 ? (
        <Text c="dimmed">This agent has no channels: add them to the Agent (Edit), then reload its configuration.</Text>
      ) : (
        <ScrollRegion label="Agent channels, scrollable">
          <Table aria-label="Agent channels" striped>
            <Table.Caption>The channels the agent listens on, and the bot each sends its messages to.</Table.Caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Channel</Table.Th>
                <Table.Th>Endpoint address</Table.Th>
                <Table.Th>Bot</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {channels.map((c) => (
                <ChannelRow key={c.name} channel={c} />
              ))}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
      )}

      <Group justify="space-between" align="flex-end">
        <Title order={3}>Messages</Title>
        <Group align="flex-end" gap="xs">
          <Select
            label="Show channel"
            data={[{ value: ALL, label: 'All channels' }, ...names.map((n) => ({ value: n, label: n }))]}
            value={channel}
            onChange={(value) => setChannel(value ?? ALL)}
            allowDeselect={false}
            w={180}
          />
          <Button variant="default" onClick={refresh}>
            Refresh
          </Button>
        </Group>
      </Group>
      {messages.error !== undefined && <OperationOutcomeAlert error={messages.error} />}
      {messages.loading && !messages.data ? (
        <Loader aria-label="Loading messages" />
      ) : (
        groups.map(([name, list]) => <ChannelMessages key={name || '(none)'} channel={name} messages={list} />)
      )}

      <PushForm agentId={id} channels={names} onDone={refresh} />
    </Stack>
  );
}

function StatusCard({ status, onRefresh }: { status: AsyncState<Parameters>; onRefresh: () => void }): ReactNode {
  if (status.error !== undefined) {
    return <OperationOutcomeAlert error={status.error} />;
  }
  if (!status.data) {
    return <Loader aria-label="Loading agent status" />;
  }
  const { status: state, version, lastUpdated } = readStatus(status.data);
  const connected = state === 'connected';
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="agent-status-title">
      <Group justify="space-between" wrap="wrap">
        <Group gap="sm">
          <Title order={3} id="agent-status-title">
            Status
          </Title>
          <Badge color={connected ? 'green' : 'red'} size="lg" data-testid="agent-status">
            {connected ? 'Connected' : 'Disconnected'}
          </Badge>
        </Group>
        <Button variant="subtle" size="compact-sm" onClick={onRefresh}>
          Refresh status
        </Button>
      </Group>
      <SimpleGrid cols={{ base: 1, sm: 2 }} mt="sm" component="dl" spacing={4}>
        <div>
          <Text component="dt" size="sm" c="dimmed">
            Agent version
          </Text>
          <Text component="dd" m={0}>
            {version ?? 'not reported'}
          </Text>
        </div>
        <div>
          <Text component="dt" size="sm" c="dimmed">
            {connected ? 'Last heartbeat' : 'Last seen'}
          </Text>
          <Text component="dd" m={0}>
            {lastUpdated ? formatDateTime(lastUpdated) : 'never'}
          </Text>
        </div>
      </SimpleGrid>
    </Paper>
  );
}

/** One channel: its name, its Endpoint's address and the Bot it sends to, by name. */
function ChannelRow({ channel }: { channel: AgentChannel }): ReactNode {
  const endpoint = useResource<Endpoint>(channel.endpoint?.reference ? channel.endpoint : undefined);
  const bot = useResource<Bot>(channel.targetReference?.reference ? channel.targetReference : undefined);
  const endpointRef = channel.endpoint?.reference;
  const botRef = channel.targetReference?.reference;
  return (
    <Table.Tr>
      <Table.Td>{channel.name}</Table.Td>
      <Table.Td>
        {endpoint.loading ? (
          <Loader size="xs" aria-label={`Loading the address of ${channel.name}`} />
        ) : endpoint.data?.address ? (
          <Anchor component={Link} to={`/${endpointRef}`}>
            <Code>{endpoint.data.address}</Code>
          </Anchor>
        ) : (
          <Text size="sm" c="dimmed">
            {endpointRef ?? 'no endpoint'}
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        {bot.loading ? (
          <Loader size="xs" aria-label={`Loading the bot of ${channel.name}`} />
        ) : botRef ? (
          <Anchor component={Link} to={`/${botRef}`}>
            {bot.data ? getDisplayString(bot.data) : (channel.targetReference?.display ?? botRef)}
          </Anchor>
        ) : (
          <Text size="sm" c="dimmed">
            {channel.targetUrl ?? 'no bot'}
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

/** The last messages of one channel, newest first; a row opens to show the whole message and its answer. */
function ChannelMessages({ channel, messages }: { channel: string; messages: AgentLogEntry[] }): ReactNode {
  // By log entry id: a row stays open while newer messages arrive above it.
  const [open, setOpen] = useState<Set<string>>(new Set());
  const idPrefix = useId();
  const title = channel ? `Messages on ${channel}` : 'Messages without a channel';
  const toggle = (i: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (!next.delete(i)) next.add(i);
      return next;
    });
  return (
    <Stack gap="xs">
      <Title order={4}>{title}</Title>
      {messages.length === 0 ? (
        <Text c="dimmed" size="sm">
          No messages yet.
        </Text>
      ) : (
        <ScrollRegion label={`${title}, scrollable`}>
          <Table aria-label={title} striped>
            <Table.Caption>Newest first; the last 20 of the channel are kept.</Table.Caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>
                  <VisuallyHidden>Details</VisuallyHidden>
                </Table.Th>
                <Table.Th>When</Table.Th>
                <Table.Th>Direction</Table.Th>
                <Table.Th>Remote</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Message</Table.Th>
                <Table.Th>Answer</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {messages.map((m) => {
                const outcome = outcomeOf(m.statusCode);
                const expanded = open.has(m.id);
                const detailsId = `${idPrefix}-message-${m.id}`;
                return (
                  <Fragment key={m.id}>
                    <Table.Tr>
                      <Table.Td>
                        <Button
                          variant="subtle"
                          size="compact-xs"
                          aria-expanded={expanded}
                          aria-controls={detailsId}
                          onClick={() => toggle(m.id)}
                        >
                          {expanded ? 'Hide' : 'Show'}
                        </Button>
                      </Table.Td>
                      <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(m.time)}</Table.Td>
                      <Table.Td>
                        <Badge variant="light" color={m.direction === 'in' ? 'blue' : 'grape'} miw="max-content">
                          {m.direction === 'in' ? 'in' : 'out'}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" ff="monospace">
                          {m.remote}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Badge variant="light" color={outcome.color} miw="max-content">
                          {outcome.label}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <Text size="xs" ff="monospace" maw={320} style={{ wordBreak: 'break-all' }}>
                          {firstLine(m.body)}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Text size="xs" ff="monospace" maw={320} style={{ wordBreak: 'break-all' }}>
                          {m.response ? firstLine(m.response) : '-'}
                        </Text>
                      </Table.Td>
                    </Table.Tr>
                    {expanded && (
                      <Table.Tr id={detailsId}>
                        <Table.Td colSpan={7}>
                          <SimpleGrid cols={{ base: 1, md: 2 }}>
                            <div>
                              <Text size="sm" fw={600}>
                                Message ({m.contentType})
                              </Text>
                              <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
                                {readableText(m.body)}
                              </Code>
                            </div>
                            <div>
                              <Text size="sm" fw={600}>
                                Answer
                              </Text>
                              <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
                                {m.response ? readableText(m.response) : '(none)'}
                              </Code>
                            </div>
                          </SimpleGrid>
                        </Table.Td>
                      </Table.Tr>
                    )}
                  </Fragment>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
      )}
    </Stack>
  );
}

/** $reload-config: the agent reads its Agent, channels and endpoints again. */
function ReloadConfig({ agentId, onDone }: { agentId: string; onDone: () => void }): ReactNode {
  const client = useHearth();
  const { busy, error, setError, run } = useAction();
  const [done, setDone] = useState<string | undefined>(undefined);
  const reload = () =>
    run(async () => {
      setDone(undefined);
      await client.post(client.fhirUrl('Agent', agentId, '$reload-config'), {
        resourceType: 'Parameters',
        parameter: [],
      });
      setDone('The agent reloaded its configuration.');
      onDone();
    });
  return (
    <Stack gap="xs">
      <Group>
        <Button onClick={() => void reload()} loading={busy}>
          Reload configuration
        </Button>
        <Text size="sm" c="dimmed">
          After changing the Agent, its channels or their endpoints.
        </Text>
      </Group>
      {done && (
        <Alert color="green" role="status" withCloseButton onClose={() => setDone(undefined)}>
          {done}
        </Alert>
      )}
      {error !== undefined && (
        <div>
          <OperationOutcomeAlert error={error} />
          <Button variant="subtle" size="compact-xs" mt={4} onClick={() => setError(undefined)}>
            Dismiss
          </Button>
        </div>
      )}
    </Stack>
  );
}

type PushAnswer = { waited: true; text: string } | { waited: false };

/** $push: a message out through the agent to a destination, and the remote's answer. */
function PushForm({
  agentId,
  channels,
  onDone,
}: {
  agentId: string;
  channels: string[];
  onDone: () => void;
}): ReactNode {
  const client = useHearth();
  const { busy, error, submit } = useAction();
  const [channel, setChannel] = useState<string | null>(null);
  const [destination, setDestination] = useState('');
  const [contentType, setContentType] = useState(HL7);
  const [body, setBody] = useState('');
  const [wait, setWait] = useState(true);
  const [answer, setAnswer] = useState<PushAnswer | undefined>(undefined);
  const onSubmit = submit(async () => {
    setAnswer(undefined);
    const parameter = [
      { name: 'destination', valueString: destination.trim() },
      // HL7 v2 segments end in carriage returns; a textarea gives line feeds.
      { name: 'body', valueString: contentType === HL7 ? body.replace(/\r?\n/g, '\r') : body },
      { name: 'contentType', valueString: contentType },
      ...(channel ? [{ name: 'channel', valueString: channel }] : []),
      { name: 'waitForResponse', valueBoolean: wait },
    ];
    const result = await client.post<string | OperationOutcome | undefined>(client.fhirUrl('Agent', agentId, '$push'), {
      resourceType: 'Parameters',
      parameter,
    });
    setAnswer(
      wait
        ? { waited: true, text: typeof result === 'string' ? result : JSON.stringify(result ?? '', null, 2) }
        : { waited: false },
    );
    onDone();
  });
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="agent-push-title">
      <Title order={3} id="agent-push-title" mb="xs">
        Push a message
      </Title>
      <form onSubmit={(e) => void onSubmit(e)} aria-label="Push a message through the agent">
        <Stack gap="sm">
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Select
              label="Channel"
              description="Else the first channel of the destination's scheme"
              placeholder="Any matching channel"
              data={channels}
              value={channel}
              onChange={setChannel}
              clearable
            />
            <TextInput
              label="Destination"
              description="An address (mllp://host:port), Device/{id} or Endpoint/{id}"
              required
              value={destination}
              onChange={(e) => setDestination(e.currentTarget.value)}
            />
          </SimpleGrid>
          <TextInput
            label="Content type"
            required
            value={contentType}
            onChange={(e) => setContentType(e.currentTarget.value)}
          />
          <Textarea
            label="Body"
            description="HL7 v2: one segment a line"
            required
            autosize
            minRows={4}
            value={body}
            onChange={(e) => setBody(e.currentTarget.value)}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          <Checkbox label="Wait for the response" checked={wait} onChange={(e) => setWait(e.currentTarget.checked)} />
          <OperationOutcomeAlert error={error} />
          <Group>
            <Button type="submit" loading={busy}>
              Push
            </Button>
          </Group>
          {answer && (
            <Alert color="green" role="status" title={answer.waited ? 'The remote answered' : 'Sent'}>
              {answer.waited ? (
                <Code block aria-label="Remote answer" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>
                  {readableText(answer.text) || '(an empty answer)'}
                </Code>
              ) : (
                'The agent took the message; its answer is not waited for (see the messages above).'
              )}
            </Alert>
          )}
        </Stack>
      </form>
    </Paper>
  );
}
