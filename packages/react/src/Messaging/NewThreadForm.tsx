import { Stack, TextInput } from '@mantine/core';
import { buildMessage, type Attachment, type Communication, type Reference } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { useHearth } from '../provider/HearthProvider.js';
import { MessageComposer } from './MessageComposer.js';

export interface NewThreadFormProps {
  /** The signed-in person ("Practitioner/1", "Patient/2"). */
  me: string;
  /** The patient the thread is about; asked for when absent (staff), given for a patient. */
  patient?: Reference;
  /** Who receives it; without, the patient. */
  recipients?: Reference[];
  onCreated: (thread: Communication) => void;
}

/** Starts a thread: a patient (for staff), a topic, and the first message. */
export function NewThreadForm({ me, patient: fixedPatient, recipients, onCreated }: NewThreadFormProps): ReactNode {
  const client = useHearth();
  const [patient, setPatient] = useState<Reference | undefined>(fixedPatient);
  const [topic, setTopic] = useState('');
  const [errors, setErrors] = useState<{ patient?: string; topic?: string }>({});

  async function send(text: string, attachments: Attachment[]): Promise<void> {
    const problems = {
      patient: patient?.reference ? undefined : 'Choose the patient',
      topic: topic.trim() ? undefined : 'Give the thread a topic',
    };
    setErrors(problems);
    if (problems.patient || problems.topic || !patient) {
      throw new Error(problems.patient ?? problems.topic);
    }
    const created = await client.createResource(
      buildMessage({
        subject: patient,
        sender: { reference: me },
        recipients: recipients ?? [patient],
        topic: topic.trim(),
        text,
        attachments,
      }),
    );
    setTopic('');
    onCreated(created);
  }

  return (
    <Stack gap="xs">
      {!fixedPatient && (
        <ReferenceInput
          label="Patient"
          targetTypes={['Patient']}
          value={patient}
          onChange={setPatient}
          error={errors.patient}
          required
        />
      )}
      <TextInput
        label="Topic"
        value={topic}
        onChange={(e) => setTopic(e.currentTarget.value)}
        error={errors.topic}
        required
      />
      <MessageComposer label="Message" onSend={send} securityContext={patient} />
    </Stack>
  );
}
