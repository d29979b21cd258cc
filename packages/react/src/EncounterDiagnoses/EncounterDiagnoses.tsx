import { Button, Group, List, Stack, Text } from '@mantine/core';
import {
  formatCodeableConcept,
  type CodeableConcept,
  type Condition,
  type Encounter,
  type Reference,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { CodeableConceptInput } from '../CodeableConceptInput/CodeableConceptInput.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { diagnosisTransaction } from './diagnosis.js';

export interface EncounterDiagnosesProps {
  encounter: Encounter;
  /** Who records them (the signed-in practitioner). */
  recorder?: Reference;
  /** Called with the Encounter's new version once a diagnosis is added. */
  onAdded?: (encounter: Encounter) => void;
}

/** The encounter's diagnoses (Conditions, category encounter-diagnosis), and a form to add one. */
export function EncounterDiagnoses({ encounter, recorder, onAdded }: EncounterDiagnosesProps): ReactNode {
  const client = useHearth();
  const query = { encounter: `Encounter/${encounter.id}`, category: 'encounter-diagnosis', _count: '100' };
  // Searched again for each version of the encounter (a diagnosis added makes one).
  const found = useAsync(
    () => client.search('Condition', query, { cache: 'no-cache' }),
    `${encounter.id}/${encounter.meta?.versionId ?? ''}`,
  );
  const [code, setCode] = useState<CodeableConcept | undefined>(undefined);
  const [formKey, setFormKey] = useState(0);
  const action = useAction();
  const diagnoses = (found.data?.entry ?? []).map((e) => e.resource as unknown as Condition);

  const add = action.submit(async () => {
    if (!code) throw new Error('Choose or type a diagnosis first');
    const response = await client.executeBatch(
      diagnosisTransaction(encounter, code, recorder, new Date().toISOString(), () => crypto.randomUUID()),
    );
    client.invalidateSearches('Condition');
    client.invalidateSearches('Encounter');
    setCode(undefined);
    setFormKey((k) => k + 1);
    const updated =
      (response.entry?.[1]?.resource as Encounter | undefined) ??
      ((await client.readResource('Encounter', encounter.id as string)) as Encounter);
    onAdded?.(updated);
  });

  return (
    <Stack gap="sm">
      <OperationOutcomeAlert error={found.error} />
      {diagnoses.length ? (
        <List size="sm" aria-label="Diagnoses">
          {diagnoses.map((c) => (
            <List.Item key={c.id}>{formatCodeableConcept(c.code) || 'Unnamed diagnosis'}</List.Item>
          ))}
        </List>
      ) : (
        <Text size="sm" c="dimmed">
          No diagnosis yet
        </Text>
      )}
      <form onSubmit={add} aria-label="Add diagnosis">
        <Stack gap="xs">
          <CodeableConceptInput
            key={formKey}
            label="Diagnosis"
            valueSet="http://hl7.org/fhir/ValueSet/condition-code"
            value={code}
            onChange={setCode}
          />
          <OperationOutcomeAlert error={action.error} />
          <Group>
            <Button type="submit" loading={action.busy}>
              Add diagnosis
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  );
}
