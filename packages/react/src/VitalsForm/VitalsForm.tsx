import { Button, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import type { Observation, Reference } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { DateTimeInput } from '../DateTimeInput/DateTimeInput.js';
import { NumericInput } from '../NumericInput/NumericInput.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import {
  BMI,
  computeBmi,
  VITAL_SIGNS,
  vitalErrors,
  vitalsTransaction,
  type VitalKey,
  type VitalValues,
} from './vitals.js';

export interface VitalsFormProps {
  subject: Reference;
  encounter?: Reference;
  /** Who measured them (the signed-in practitioner). */
  performer?: Reference;
  /** Called with the stored Observations once the transaction succeeded. */
  onSaved?: (observations: Observation[]) => void;
}

/**
 * Records a set of vital signs in one transaction: LOINC-coded Observations with UCUM units, blood
 * pressure as a panel, and the body mass index computed from height and weight as they are typed.
 */
export function VitalsForm({ subject, encounter, performer, onSaved }: VitalsFormProps): ReactNode {
  const client = useHearth();
  const [texts, setTexts] = useState<Partial<Record<VitalKey, number | string>>>({});
  const [effective, setEffective] = useState<string | undefined>(() => new Date().toISOString());
  const [tried, setTried] = useState(false);
  const action = useAction();
  const values: VitalValues = Object.fromEntries(
    Object.entries(texts).filter(([, v]) => typeof v === 'number'),
  ) as VitalValues;
  const unparsed = Object.entries(texts).some(([, v]) => typeof v === 'string');
  const errors = vitalErrors(values);
  const bmi = computeBmi(values.height, values.weight);
  const empty = Object.keys(values).length === 0;

  const save = action.submit(async () => {
    setTried(true);
    if (empty || unparsed || Object.keys(errors).length || !effective) return;
    const bundle = vitalsTransaction(values, { subject, encounter, performer, effective }, () => crypto.randomUUID());
    const response = await client.executeBatch(bundle);
    client.invalidateSearches('Observation');
    const stored = (response.entry ?? []).map((e) => e.resource as Observation).filter(Boolean);
    setTexts({});
    setTried(false);
    onSaved?.(stored);
  });

  return (
    <form onSubmit={save} aria-label="Vital signs" noValidate>
      <Stack gap="sm">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm">
          {VITAL_SIGNS.map((sign) => (
            <NumericInput
              key={sign.key}
              label={`${sign.label} (${sign.unit})`}
              value={texts[sign.key]}
              error={errors[sign.key]}
              onChange={(v) => setTexts((t) => ({ ...t, [sign.key]: v }))}
            />
          ))}
        </SimpleGrid>
        <Group align="flex-end" gap="md" wrap="wrap">
          <DateTimeInput label="Measured at" type="dateTime" value={effective} onChange={setEffective} required />
          <Text size="sm" role="status" aria-label="Body mass index">
            BMI: {bmi !== undefined ? `${bmi} ${BMI.unit}` : 'needs height and weight'}
          </Text>
        </Group>
        {tried && empty && (
          <Text c="red.9" size="sm">
            Enter at least one vital sign
          </Text>
        )}
        <OperationOutcomeAlert error={action.error} />
        <Group>
          <Button type="submit" loading={action.busy}>
            Save vital signs
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
