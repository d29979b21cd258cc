import { Badge, Button, Group, SegmentedControl, Select, Stack, Text, TextInput } from '@mantine/core';
import {
  formatCodeableConcept,
  formatDateTime,
  formatQuantity,
  type MedicationAdministration,
  type MedicationRequest,
  type Reference,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { DateTimeInput } from '../DateTimeInput/DateTimeInput.js';
import { NumericInput } from '../NumericInput/NumericInput.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { ROUTES } from '../PrescribeForm/prescription.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { administrationErrors, administrationResource, draftFor, type AdministrationDraft } from './administration.js';

export interface MedicationAdministrationFormProps {
  /** The active request the administration fulfils. */
  request: MedicationRequest;
  /** Who gave it (the signed-in practitioner). */
  performer?: Reference;
  onRecorded: (administration: MedicationAdministration) => void;
  onCancel?: () => void;
}

/**
 * Records one administration of an active prescription: given (dose, route, time; dose and route
 * start from the prescription) or not given with the reason. The signed-in clinician is the performer.
 */
export function MedicationAdministrationForm({
  request,
  performer,
  onRecorded,
  onCancel,
}: MedicationAdministrationFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [draft, setDraft] = useState<AdministrationDraft>(() => draftFor(request));
  const [checked, setChecked] = useState(false);
  const errors = checked ? administrationErrors(draft) : {};
  const name = formatCodeableConcept(request.medicationCodeableConcept) || 'medication';
  const set = (patch: Partial<AdministrationDraft>) => setDraft((d) => ({ ...d, ...patch }));
  return (
    <form
      aria-label={`Record administration of ${name}`}
      onSubmit={action.submit(async () => {
        setChecked(true);
        if (Object.keys(administrationErrors(draft)).length) return;
        if (request.status !== 'active') throw new Error('Only an active prescription can be administered');
        const saved = await client.createResource(administrationResource(request, draft, performer));
        client.invalidateSearches('MedicationAdministration');
        onRecorded(saved as MedicationAdministration);
      })}
    >
      <Stack gap="xs">
        <SegmentedControl
          aria-label="Outcome"
          value={draft.given ? 'given' : 'not-given'}
          onChange={(v) => set({ given: v === 'given' })}
          data={[
            { value: 'given', label: 'Given' },
            { value: 'not-given', label: 'Not given' },
          ]}
          style={{ alignSelf: 'flex-start' }}
        />
        <Group gap="xs" wrap="wrap" align="flex-start">
          {draft.given && (
            <>
              <NumericInput
                label="Dose given"
                value={draft.doseValue}
                onChange={(v) => set({ doseValue: v })}
                error={errors.dose}
                style={{ flex: '0 1 120px', minWidth: 90 }}
              />
              <TextInput
                label="Unit"
                value={draft.doseUnit}
                onChange={(e) => set({ doseUnit: e.currentTarget.value })}
                error={errors.doseUnit}
                style={{ flex: '0 1 120px', minWidth: 90 }}
              />
              <Select
                label="Route"
                data={ROUTES.map((r) => ({ value: r.code, label: r.display }))}
                value={draft.routeCode}
                allowDeselect={false}
                onChange={(v) => v && set({ routeCode: v })}
                style={{ flex: '1 1 180px', minWidth: 0 }}
              />
            </>
          )}
          <div style={{ flex: '1 1 200px', minWidth: 0 }}>
            <DateTimeInput
              label={draft.given ? 'Time given' : 'Time due'}
              value={draft.time}
              onChange={(v) => set({ time: v })}
              error={errors.time}
            />
          </div>
        </Group>
        {!draft.given && (
          <TextInput
            label="Reason not given"
            value={draft.reason}
            onChange={(e) => set({ reason: e.currentTarget.value })}
            error={errors.reason}
          />
        )}
        <Group gap="xs">
          <Button type="submit" size="sm" loading={action.busy}>
            Record
          </Button>
          {onCancel && (
            <Button size="sm" variant="default" onClick={onCancel}>
              Close
            </Button>
          )}
        </Group>
        <OperationOutcomeAlert error={action.error} />
      </Stack>
    </form>
  );
}

export interface AdministrationRecordProps {
  request: MedicationRequest;
  /** This request's administrations, newest first. */
  administrations: MedicationAdministration[];
  performer?: Reference;
  onRecorded: () => void;
}

/** A prescription's administrations (given or not, when, dose and route, by whom) and, while it is active, a way to record one. */
export function AdministrationRecord({
  request,
  administrations,
  performer,
  onRecorded,
}: AdministrationRecordProps): ReactNode {
  const [recording, setRecording] = useState(false);
  const name = formatCodeableConcept(request.medicationCodeableConcept) || 'medication';
  return (
    <Stack gap={4} mt={4}>
      {administrations.length > 0 && (
        <Stack
          gap={2}
          component="ul"
          aria-label={`Administrations of ${name}`}
          style={{ listStyle: 'none', padding: 0, margin: 0 }}
        >
          {administrations.map((a) => (
            <li key={a.id}>
              <Group gap={6} wrap="wrap">
                <Badge size="sm" color={a.status === 'completed' ? 'green' : 'orange'} variant="light">
                  {a.status === 'completed' ? 'Given' : a.status === 'not-done' ? 'Not given' : a.status}
                </Badge>
                <Text size="sm">
                  {formatDateTime(a.effectiveDateTime ?? a.effectivePeriod?.start, undefined, {
                    dateStyle: 'medium',
                    timeStyle: 'short',
                  })}
                  {a.dosage?.dose ? ` · ${formatQuantity(a.dosage.dose)}` : ''}
                  {a.dosage?.route ? ` · ${formatCodeableConcept(a.dosage.route)}` : ''}
                  {a.statusReason?.length ? ` · ${formatCodeableConcept(a.statusReason[0])}` : ''}
                </Text>
                {a.performer?.[0]?.actor && <ResourceBadge value={a.performer[0].actor} avatar={false} link={false} />}
              </Group>
            </li>
          ))}
        </Stack>
      )}
      {request.status === 'active' &&
        (recording ? (
          <MedicationAdministrationForm
            request={request}
            performer={performer}
            onCancel={() => setRecording(false)}
            onRecorded={() => {
              setRecording(false);
              onRecorded();
            }}
          />
        ) : (
          <Button size="xs" variant="light" onClick={() => setRecording(true)} style={{ alignSelf: 'flex-start' }}>
            Record administration
          </Button>
        ))}
    </Stack>
  );
}
