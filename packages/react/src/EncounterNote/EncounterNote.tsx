import { Alert, Badge, Button, Group, Loader, Paper, Stack, Text, Textarea, Title } from '@mantine/core';
import { formatDateTime, type Composition, type Reference } from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useSearch } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { ResourceHistory } from '../ResourceHistory/ResourceHistory.js';
import { draftNote, isSigned, noteText, PROGRESS_NOTE, signNote } from './note.js';

export interface EncounterNoteProps {
  subject: Reference;
  encounter: Reference;
  /** Who writes and signs (the signed-in practitioner). */
  author: Reference;
}

/**
 * The encounter's progress note (a Composition): written and saved as a draft, signed (final,
 * attested by the author with the time), amended after signing (a new version, signed again),
 * with its versions listed.
 */
export function EncounterNote({ subject, encounter, author }: EncounterNoteProps): ReactNode {
  const client = useHearth();
  const found = useSearch('Composition', {
    encounter: encounter.reference ?? '',
    type: `${PROGRESS_NOTE.coding[0].system}|${PROGRESS_NOTE.coding[0].code}`,
    _sort: '-_lastUpdated',
    _count: '1',
  });
  const [note, setNote] = useState<Composition | undefined>(undefined);
  const [text, setText] = useState('');
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const loaded = found.data?.entry?.[0]?.resource as Composition | undefined;

  // Only a new search answer (which `loaded` comes from) resets the editor.
  useEffect(() => {
    if (!found.data) return;
    setNote(loaded);
    setText(noteText(loaded));
    setEditing(!isSigned(loaded));
  }, [found.data]);

  const save = (sign: boolean) =>
    action.run(async () => {
      if (!text.trim()) throw new Error('Write the note first');
      const input = { subject, encounter, author, text, now: new Date().toISOString() };
      const next = sign ? signNote(note, input) : draftNote(note, input);
      const stored = (next.id ? await client.updateResource(next) : await client.createResource(next)) as Composition;
      client.invalidateSearches('Composition');
      setNote(stored);
      setText(noteText(stored));
      setEditing(!isSigned(stored));
    });

  if (found.loading && !found.data) return <Loader aria-label="Loading note" size="sm" />;
  const signed = isSigned(note);
  const lastSignature = note?.attester?.[note.attester.length - 1];
  return (
    <Stack gap="sm" aria-label="Encounter note" role="group">
      <OperationOutcomeAlert error={found.error ?? action.error} />
      {note && (
        <Group gap="xs" wrap="wrap">
          <Badge color={signed ? 'green' : 'yellow'} variant="light">
            {note.status === 'preliminary' ? 'Draft' : note.status === 'final' ? 'Signed' : 'Amended'}
          </Badge>
          <Text size="sm" c="dimmed">
            Version {note.meta?.versionId}
          </Text>
        </Group>
      )}
      {signed && lastSignature && (
        <Alert color="green" p="xs" role="status">
          Signed by {lastSignature.party?.display ?? lastSignature.party?.reference} on{' '}
          {formatDateTime(lastSignature.time ?? '')}
        </Alert>
      )}
      {editing ? (
        <>
          <Textarea
            label={signed ? 'Amended note' : 'Note'}
            autosize
            minRows={5}
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
          />
          <Group gap="sm">
            {!signed && (
              <Button variant="default" onClick={() => save(false)} loading={action.busy}>
                Save draft
              </Button>
            )}
            <Button onClick={() => save(true)} loading={action.busy}>
              {signed ? 'Sign amendment' : 'Sign note'}
            </Button>
            {signed && (
              <Button
                variant="subtle"
                onClick={() => {
                  setText(noteText(note));
                  setEditing(false);
                }}
              >
                Cancel
              </Button>
            )}
          </Group>
        </>
      ) : (
        <>
          <Paper withBorder p="sm" aria-label="Signed note">
            <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
              {noteText(note)}
            </Text>
          </Paper>
          <Group>
            <Button variant="default" onClick={() => setEditing(true)}>
              Amend note
            </Button>
          </Group>
        </>
      )}
      {note?.id && (
        <>
          <Title order={5}>Note history</Title>
          <ResourceHistory key={note.meta?.versionId} resourceType="Composition" id={note.id} />
        </>
      )}
    </Stack>
  );
}
