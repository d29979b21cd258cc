import { javascript } from '@codemirror/lang-javascript';
import { Alert, Badge, Button, Grid, Group, Loader, Select, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { formatDateTime, type Bot, type Resource } from '@hearth/core';
import { JsonView, OperationOutcomeAlert, useAsync, useHearth } from '@hearth/react';
import CodeMirror from '@uiw/react-codemirror';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';

export const DEFAULT_BOT_CODE = `// A bot: handler(client, event) runs on Bot/$execute and on subscriptions.
// event.input is the request body; the return value is the response.
export async function handler(client, event) {
  const input = event.input;
  console.log('Running with', JSON.stringify(input));
  return { ok: true, echo: input };
}
`;

/** `/admin/bots/:id`: edit a bot's code, save and deploy it, execute it with input, read its logs. */
export function BotEditor(): ReactNode {
  const { id = '' } = useParams();
  const client = useHearth();
  const bot = useAsync<Bot>(() => client.readResource('Bot', id, { cache: 'no-cache' }), id);
  const [code, setCode] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState<{ error?: unknown; message?: string }>({});
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const [input, setInput] = useState('{\n  "hello": "world"\n}');
  const [contentType, setContentType] = useState('application/json');
  const [output, setOutput] = useState<{ value?: unknown; error?: unknown } | undefined>(undefined);
  const [logsGeneration, setLogsGeneration] = useState(0);
  // A run's AuditEvent is recorded as the run ends; look again shortly after each execution.
  const refreshLogsSoon = () => {
    for (const delay of [0, 1000, 3000]) {
      setTimeout(() => setLogsGeneration((g) => g + 1), delay);
    }
  };
  const logs = useAsync<Resource[]>(
    async () =>
      (await client.searchResources(
        'AuditEvent',
        { entity: `Bot/${id}`, _sort: '-date', _count: '20' },
        { cache: 'no-cache' },
      )) as Resource[],
    `${id}/${logsGeneration}`,
  );

  // The stored source (Bot.sourceCode, a Binary), else the deprecated inline code, else a template.
  useEffect(() => {
    if (!bot.data || code !== undefined) return;
    const url = bot.data.sourceCode?.url;
    if (url) {
      client
        .download(url)
        .then((blob) => blob.text())
        .then(setCode, () => setCode(bot.data?.code ?? DEFAULT_BOT_CODE));
    } else {
      setCode(bot.data.code ?? DEFAULT_BOT_CODE);
    }
  }, [bot.data, client, code]);

  if (bot.error) return <OperationOutcomeAlert error={bot.error} />;
  if (!bot.data || code === undefined) return <Loader aria-label="Loading bot" />;

  async function act(name: string, action: () => Promise<string>): Promise<void> {
    setBusy(name);
    setStatus({});
    try {
      setStatus({ message: await action() });
    } catch (err) {
      setStatus({ error: err });
    } finally {
      setBusy(undefined);
    }
  }

  const save = async (): Promise<Bot> => {
    const sourceCode = await client.createAttachment({
      contentType: 'text/typescript',
      data: code,
      filename: 'index.ts',
    });
    const updated = await client.updateResource({ ...(bot.data as Bot), sourceCode });
    return updated as Bot;
  };

  return (
    <Stack>
      <Group justify="space-between">
        <div>
          <Title order={2}>{bot.data.name ?? 'Bot'}</Title>
          <Text size="sm" c="dimmed">
            <Link to="/admin/bots">Bots</Link> · <Link to={`/Bot/${id}`}>Bot/{id}</Link>
          </Text>
        </div>
        <Group>
          <Button
            variant="default"
            loading={busy === 'save'}
            onClick={() => act('save', async () => (await save(), 'Saved'))}
          >
            Save
          </Button>
          <Button
            loading={busy === 'deploy'}
            onClick={() =>
              act('deploy', async () => {
                await save();
                await client.post(client.fhirUrl('Bot', id, '$deploy'), { filename: 'index.ts' }, 'application/json');
                return 'Saved and deployed';
              })
            }
          >
            Save and deploy
          </Button>
        </Group>
      </Group>
      {status.message && (
        <Alert color="green" role="status">
          {status.message}
        </Alert>
      )}
      {status.error !== undefined && <OperationOutcomeAlert error={status.error} />}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <div
            aria-label="Bot code editor"
            role="region"
            style={{ border: '1px solid var(--mantine-color-gray-4)', borderRadius: 4 }}
          >
            <CodeMirror
              value={code}
              height="420px"
              extensions={[javascript({ typescript: true })]}
              onChange={setCode}
              aria-label="Bot code"
            />
          </div>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Stack>
            <Title order={4}>Execute</Title>
            <Select
              label="Content type"
              data={['application/json', 'text/plain', 'x-application/hl7-v2+er7', 'application/fhir+json']}
              value={contentType}
              allowDeselect={false}
              onChange={(v) => v && setContentType(v)}
            />
            <Textarea
              label="Input"
              autosize
              minRows={5}
              styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              value={input}
              onChange={(e) => setInput(e.currentTarget.value)}
            />
            <Button
              w="fit-content"
              loading={busy === 'execute'}
              onClick={async () => {
                setBusy('execute');
                setOutput(undefined);
                try {
                  const body = contentType.includes('json') ? JSON.parse(input) : input;
                  setOutput({ value: await client.executeBot(id, body, contentType) });
                } catch (err) {
                  setOutput({ error: err });
                } finally {
                  setBusy(undefined);
                  refreshLogsSoon();
                }
              }}
            >
              Execute
            </Button>
            {output?.error !== undefined && <OperationOutcomeAlert error={output.error} title="Execution failed" />}
            {output && output.error === undefined && (
              <div aria-label="Bot output" role="region">
                <Text size="sm" fw={500}>
                  Output
                </Text>
                <JsonView value={output.value ?? null} maxHeight={240} />
              </div>
            )}
          </Stack>
        </Grid.Col>
      </Grid>
      <Group justify="space-between">
        <Title order={4}>Logs</Title>
        <Button variant="subtle" size="compact-sm" onClick={() => setLogsGeneration((g) => g + 1)}>
          Refresh logs
        </Button>
      </Group>
      {logs.error !== undefined && <OperationOutcomeAlert error={logs.error} />}
      <Table aria-label="Bot logs" striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={200}>When</Table.Th>
            <Table.Th w={90}>Outcome</Table.Th>
            <Table.Th>Output</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(logs.data ?? []).map((event) => (
            <Table.Tr key={event.id}>
              <Table.Td>{formatDateTime(event.recorded as string)}</Table.Td>
              <Table.Td>
                {event.outcome === '0' ? <Badge color="green">ok</Badge> : <Badge color="red">failed</Badge>}
              </Table.Td>
              <Table.Td>
                <Text component="pre" size="xs" m={0} style={{ whiteSpace: 'pre-wrap' }}>
                  {String(event.outcomeDesc ?? '')}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {logs.data?.length === 0 && <Text c="dimmed">No runs yet.</Text>}
    </Stack>
  );
}
