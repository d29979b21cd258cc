import { Button, Grid, Group, Loader, Modal, Paper, Stack, Title } from '@mantine/core';
import type { Patient, Reference } from '@hearth/core';
import {
  loadThreads,
  MESSAGES_CHANGED,
  MessageThread,
  NewThreadForm,
  OperationOutcomeAlert,
  ThreadList,
  useAsync,
  useHearth,
  useMessageStream,
  useProfile,
} from '@hearth/react';
import { useEffect, useState, type ReactNode } from 'react';
import { useNavigate, useParams } from 'react-router';

/**
 * Secure messages (/messages, /messages/:threadId): the threads the signed-in person takes part
 * in with unread badges, the open thread and its reply box, and a new thread (staff choose the
 * patient; a patient writes to their general practitioner). New messages appear live. At phone
 * width the list and the thread take the screen in turn.
 */
export function MessagesPage(): ReactNode {
  const client = useHearth();
  const profile = useProfile();
  const navigate = useNavigate();
  const { threadId } = useParams();
  const me = profile?.id ? `${profile.resourceType}/${profile.id}` : undefined;
  const [changes, setChanges] = useState(0);
  const [composing, setComposing] = useState(false);
  useEffect(() => {
    const bump = () => setChanges((n) => n + 1);
    window.addEventListener(MESSAGES_CHANGED, bump);
    return () => window.removeEventListener(MESSAGES_CHANGED, bump);
  }, []);
  useMessageStream(me, () => setChanges((n) => n + 1));
  const threads = useAsync(me ? () => loadThreads(client, me) : undefined, `${me}/${changes}`);

  const isPatient = profile?.resourceType === 'Patient';
  const patient = isPatient ? { reference: me } : undefined;
  // A patient's new thread goes to their general practitioners.
  const careTeam = ((profile as Patient | undefined)?.generalPractitioner ?? []) as Reference[];
  const canStart = !isPatient || careTeam.length > 0;

  if (!me) {
    return <Loader aria-label="Loading messages" />;
  }
  const list = (
    <Paper withBorder p="xs" component="nav" aria-label="Threads">
      <Stack gap="xs">
        <Group justify="space-between">
          <Title order={2} size="h4">
            Threads
          </Title>
          {canStart && (
            <Button size="xs" onClick={() => setComposing(true)}>
              New message
            </Button>
          )}
        </Group>
        {threads.error !== undefined && <OperationOutcomeAlert error={threads.error} />}
        {threads.data ? (
          <ThreadList threads={threads.data} selected={threadId} onOpen={(id) => navigate(`/messages/${id}`)} />
        ) : (
          <Loader size="sm" aria-label="Loading threads" />
        )}
      </Stack>
    </Paper>
  );
  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        Messages
      </Title>
      <Grid>
        <Grid.Col span={{ base: 12, sm: 5, lg: 4 }} display={{ base: threadId ? 'none' : 'block', sm: 'block' }}>
          {list}
        </Grid.Col>
        {threadId && (
          <Grid.Col span={{ base: 12, sm: 7, lg: 8 }}>
            <Stack gap="xs">
              <Button variant="subtle" size="xs" w="fit-content" hiddenFrom="sm" onClick={() => navigate('/messages')}>
                All threads
              </Button>
              <MessageThread key={threadId} threadId={threadId} me={me} />
            </Stack>
          </Grid.Col>
        )}
      </Grid>
      <Modal opened={composing} onClose={() => setComposing(false)} title="New message" size="lg">
        <NewThreadForm
          me={me}
          patient={patient}
          recipients={isPatient ? careTeam : undefined}
          onCreated={(thread) => {
            setComposing(false);
            setChanges((n) => n + 1);
            navigate(`/messages/${thread.id}`);
          }}
        />
      </Modal>
    </Stack>
  );
}
