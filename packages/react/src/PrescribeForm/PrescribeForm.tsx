import { Alert, Button, Checkbox, Group, NumberInput, Select, Stack, Text } from '@mantine/core';
import { formatSig, type AllergyIntolerance, type Coding, type MedicationRequest, type Reference } from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { CodingInput } from '../CodingInput/CodingInput.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import {
  allergyConflicts,
  doseUnitOf,
  draftDosage,
  MEDICATIONS_VALUE_SET,
  prescriptionResource,
  ROUTES,
  routeOf,
  type AllergyConflict,
  type PrescriptionDraft,
} from './prescription.js';

export interface PrescribeFormProps {
  patientId: string;
  /** Who prescribes (the signed-in practitioner). */
  requester?: Reference;
  onPrescribed?: (request: MedicationRequest) => void;
}

const FREQUENCIES: { value: string; label: string; frequency: number; period: number; unit: 'h' | 'd' | 'wk' }[] = [
  { value: '1/1d', label: 'Once a day', frequency: 1, period: 1, unit: 'd' },
  { value: '2/1d', label: 'Twice a day', frequency: 2, period: 1, unit: 'd' },
  { value: '3/1d', label: '3 times a day', frequency: 3, period: 1, unit: 'd' },
  { value: '4/1d', label: '4 times a day', frequency: 4, period: 1, unit: 'd' },
  { value: '1/4h', label: 'Every 4 hours', frequency: 1, period: 4, unit: 'h' },
  { value: '1/6h', label: 'Every 6 hours', frequency: 1, period: 6, unit: 'h' },
  { value: '1/8h', label: 'Every 8 hours', frequency: 1, period: 8, unit: 'h' },
  { value: '1/1wk', label: 'Once a week', frequency: 1, period: 1, unit: 'wk' },
];

const EMPTY: PrescriptionDraft = { doseUnit: 'tablet', routeCode: '26643006', periodUnit: 'd', asNeeded: false };

const numberOrUndefined = (v: string | number) => (typeof v === 'number' ? v : undefined);

/**
 * Prescribes a drug: an RxNorm clinical drug found by type-ahead, a structured dosage whose sig is
 * shown back as it is built, quantity and refills, and the patient's allergies checked against it
 * (a warning to acknowledge before signing, recorded on the request as a DetectedIssue).
 */
export function PrescribeForm({ patientId, requester, onPrescribed }: PrescribeFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [draft, setDraft] = useState<PrescriptionDraft>(EMPTY);
  const [conflicts, setConflicts] = useState<AllergyConflict[]>([]);
  const [acknowledged, setAcknowledged] = useState(false);
  const [formKey, setFormKey] = useState(0);
  const set = (patch: Partial<PrescriptionDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const medication = draft.medication;

  useEffect(() => {
    setConflicts([]);
    setAcknowledged(false);
    if (!medication?.code) return;
    let live = true;
    client
      .searchResources('AllergyIntolerance', { patient: `Patient/${patientId}`, _count: '100' }, { cache: 'no-cache' })
      .then((allergies) => allergyConflicts(client, medication, allergies as AllergyIntolerance[]))
      .then((found) => live && setConflicts(found))
      .catch((err: unknown) => live && action.setError(err));
    return () => {
      live = false;
    };
  }, [client, patientId, medication?.system, medication?.code]);

  // No sig until there is a dose to take (a route alone reads "Take by mouth").
  const sig = draft.doseValue === undefined ? '' : formatSig(draftDosage(draft));
  const frequency = FREQUENCIES.find(
    (f) => f.frequency === draft.frequency && f.period === draft.period && f.unit === draft.periodUnit,
  );

  const sign = action.submit(async () => {
    if (!medication?.code) throw new Error('Choose a medication first');
    if (draft.doseValue === undefined) throw new Error('Enter the dose');
    if (conflicts.length && !acknowledged) throw new Error('Acknowledge the allergy warning before signing');
    const created = await client.createResource(
      prescriptionResource(
        draft,
        sig,
        { reference: `Patient/${patientId}` },
        requester,
        new Date().toISOString(),
        conflicts,
      ),
    );
    client.invalidateSearches('MedicationRequest');
    setDraft(EMPTY);
    setFormKey((k) => k + 1);
    onPrescribed?.(created as MedicationRequest);
  });

  return (
    <form onSubmit={sign} aria-label="Prescribe">
      <Stack gap="xs">
        <CodingInput
          key={formKey}
          label="Medication"
          valueSet={MEDICATIONS_VALUE_SET}
          value={medication}
          onChange={(c: Coding | undefined) =>
            set(
              c?.code
                ? { medication: c, doseUnit: doseUnitOf(c.display), routeCode: routeOf(c.display) }
                : { medication: c },
            )
          }
        />
        <Group grow align="flex-start" wrap="wrap">
          <NumberInput
            label="Dose"
            min={0}
            decimalScale={3}
            value={draft.doseValue ?? ''}
            onChange={(v) => set({ doseValue: numberOrUndefined(v) })}
            miw={120}
          />
          <Select
            label="Dose unit"
            data={['tablet', 'capsule', 'puff', 'mL', 'mg', 'patch', 'application']}
            value={draft.doseUnit}
            onChange={(v) => v && set({ doseUnit: v })}
            allowDeselect={false}
            miw={120}
          />
          <Select
            label="Route"
            data={ROUTES.map((r) => ({ value: r.code, label: r.display }))}
            value={draft.routeCode}
            onChange={(v) => v && set({ routeCode: v })}
            allowDeselect={false}
            miw={160}
          />
        </Group>
        <Group grow align="flex-start" wrap="wrap">
          <Select
            label="Frequency"
            data={FREQUENCIES.map(({ value, label }) => ({ value, label }))}
            value={frequency?.value ?? null}
            onChange={(v) => {
              const f = FREQUENCIES.find((x) => x.value === v);
              set({ frequency: f?.frequency, period: f?.period, periodUnit: f?.unit ?? 'd' });
            }}
            miw={160}
          />
          <NumberInput
            label="Duration (days)"
            min={1}
            allowDecimal={false}
            value={draft.durationDays ?? ''}
            onChange={(v) => set({ durationDays: numberOrUndefined(v) })}
            miw={120}
          />
        </Group>
        <Checkbox
          label="As needed"
          checked={draft.asNeeded}
          onChange={(e) => set({ asNeeded: e.currentTarget.checked })}
        />
        <Group grow align="flex-start" wrap="wrap">
          <NumberInput
            label="Quantity to dispense"
            min={0}
            value={draft.quantity ?? ''}
            onChange={(v) => set({ quantity: numberOrUndefined(v) })}
            miw={120}
          />
          <NumberInput
            label="Refills"
            min={0}
            allowDecimal={false}
            value={draft.refills ?? ''}
            onChange={(v) => set({ refills: numberOrUndefined(v) })}
            miw={120}
          />
        </Group>
        <Text role="status" aria-label="Sig" fw={500}>
          {sig ? `Sig: ${sig}` : 'Sig: enter a dose'}
        </Text>
        {conflicts.length > 0 && (
          <Alert color="red" title="Allergy warning" role="alert">
            <Stack gap={4}>
              {conflicts.map((c) => (
                <Text size="sm" key={c.allergy.id}>
                  Allergic to {c.allergy.code?.text ?? c.matched.display ?? c.matched.code}
                  {c.allergy.criticality ? ` (${c.allergy.criticality} criticality)` : ''}:{' '}
                  {medication?.display ?? medication?.code} contains or belongs to {c.matched.display ?? c.matched.code}
                </Text>
              ))}
              <Checkbox
                label="I have reviewed the allergy and prescribe anyway"
                checked={acknowledged}
                onChange={(e) => setAcknowledged(e.currentTarget.checked)}
              />
            </Stack>
          </Alert>
        )}
        <OperationOutcomeAlert error={action.error} />
        <Group>
          <Button type="submit" loading={action.busy} disabled={conflicts.length > 0 && !acknowledged}>
            Sign prescription
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
