import { Badge, Button, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import {
  formatCodeableConcept,
  formatSig,
  type MedicationAdministration,
  type MedicationRequest,
  type Reference,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { loadAdministrations } from '../MedicationAdministrationForm/administration.js';
import { AdministrationRecord } from '../MedicationAdministrationForm/MedicationAdministrationForm.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';

export interface MedicationListProps {
  patientId: string;
  /** Changes whenever a prescription is added elsewhere, to search again. */
  version?: number;
  /** Who records administrations (the signed-in clinician); each request shows its administrations. */
  performer?: Reference;
}

/** The groups the list shows, by MedicationRequest.status. */
export const MEDICATION_GROUPS: { title: string; statuses: string[] }[] = [
  { title: 'Active', statuses: ['active', 'on-hold', 'draft'] },
  { title: 'Stopped', statuses: ['stopped', 'cancelled'] },
  { title: 'Completed', statuses: ['completed'] },
];

/** The request stopped: status stopped, the reason as statusReason (R4 MedicationRequest). */
export function stoppedRequest(request: MedicationRequest, reason: string): MedicationRequest {
  return { ...request, status: 'stopped', statusReason: { text: reason } };
}

/** A patient's MedicationRequests in active / stopped / completed groups, each active one stoppable with a reason. */
export function MedicationList({ patientId, version = 0, performer }: MedicationListProps): ReactNode {
  const client = useHearth();
  const [reload, setReload] = useState(0);
  const found = useAsync(
    () =>
      client.searchResources(
        'MedicationRequest',
        { subject: `Patient/${patientId}`, _sort: '-authoredon', _count: '200' },
        { cache: 'no-cache' },
      ),
    `${patientId}/${version}/${reload}`,
  );
  const [given, setGiven] = useState(0);
  const administered = useAsync(() => loadAdministrations(client, patientId), `${patientId}/${version}/${given}`);
  const requests = (found.data ?? []) as MedicationRequest[];
  return (
    <Stack gap="md">
      <OperationOutcomeAlert error={found.error ?? administered.error} />
      {MEDICATION_GROUPS.map((group) => {
        const items = requests.filter((r) => group.statuses.includes(r.status));
        return (
          <section key={group.title} aria-label={`${group.title} medications`}>
            <Title order={4}>
              {group.title} ({items.length})
            </Title>
            {items.length === 0 ? (
              <Text size="sm" c="dimmed">
                None
              </Text>
            ) : (
              <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                {items.map((r) => (
                  <MedicationItem
                    key={r.id}
                    request={r}
                    administrations={administered.data?.get(`MedicationRequest/${r.id}`) ?? []}
                    performer={performer}
                    onChanged={() => setReload((n) => n + 1)}
                    onAdministered={() => setGiven((n) => n + 1)}
                  />
                ))}
              </Stack>
            )}
          </section>
        );
      })}
    </Stack>
  );
}

function MedicationItem({
  request,
  administrations,
  performer,
  onChanged,
  onAdministered,
}: {
  request: MedicationRequest;
  administrations: MedicationAdministration[];
  performer?: Reference;
  onChanged: () => void;
  onAdministered: () => void;
}): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [stopping, setStopping] = useState(false);
  const [reason, setReason] = useState('');
  const name = formatCodeableConcept(request.medicationCodeableConcept) || 'Unnamed medication';
  const sig = request.dosageInstruction?.[0] ? formatSig(request.dosageInstruction[0]) : '';
  const stop = action.submit(async () => {
    if (!reason.trim()) throw new Error('Give a reason for stopping');
    await client.updateResource(stoppedRequest(request, reason.trim()));
    client.invalidateSearches('MedicationRequest');
    setStopping(false);
    onChanged();
  });
  return (
    <li aria-label={name}>
      <Group justify="space-between" wrap="wrap" gap="xs">
        <div style={{ minWidth: 0 }}>
          <Text fw={500} style={{ overflowWrap: 'anywhere' }}>
            {name}
          </Text>
          {sig && <Text size="sm">{sig}</Text>}
          <Text size="xs" c="dimmed">
            {request.authoredOn ? `Prescribed ${request.authoredOn.slice(0, 10)}` : ''}
            {request.dispenseRequest?.numberOfRepeatsAllowed !== undefined
              ? ` · ${request.dispenseRequest.numberOfRepeatsAllowed} refills`
              : ''}
            {request.statusReason ? ` · Stopped: ${formatCodeableConcept(request.statusReason)}` : ''}
          </Text>
        </div>
        <Group gap="xs">
          {request.detectedIssue?.length ? (
            <Badge color="red" variant="light">
              Allergy override
            </Badge>
          ) : null}
          {request.status === 'active' && !stopping && (
            <Button size="xs" variant="light" color="red" onClick={() => setStopping(true)}>
              Stop
            </Button>
          )}
        </Group>
      </Group>
      {stopping && (
        <form onSubmit={stop} aria-label={`Stop ${name}`}>
          <Group align="flex-end" gap="xs" wrap="wrap">
            <TextInput
              label="Reason for stopping"
              value={reason}
              onChange={(e) => setReason(e.currentTarget.value)}
              style={{ flex: 1, minWidth: 160 }}
            />
            <Button type="submit" size="sm" color="red" loading={action.busy}>
              Confirm stop
            </Button>
            <Button size="sm" variant="default" onClick={() => setStopping(false)}>
              Cancel
            </Button>
          </Group>
          <OperationOutcomeAlert error={action.error} />
        </form>
      )}
      <AdministrationRecord
        request={request}
        administrations={administrations}
        performer={performer}
        onRecorded={onAdministered}
      />
    </li>
  );
}
