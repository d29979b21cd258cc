import { Alert, Badge, Button, Card, Group, List, Stack, Table, Text, Title } from '@mantine/core';
import {
  formatCodeableConcept,
  formatDateTime,
  type ChargeItem,
  type Claim,
  type Encounter,
  type OperationOutcomeIssue,
} from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { ClaimCard } from '../ClaimCard/ClaimCard.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { buildClaim, captureCharges, formatMoney } from '../util/billing.js';
import { ScrollRegion } from '../util/scroll-region.js';

export interface EncounterChargesProps {
  patientId: string;
}

/** An encounter's name: its type and when it started. */
export function encounterTitle(encounter: Encounter): string {
  const type =
    formatCodeableConcept(encounter.type?.[0]) || encounter.class?.display || encounter.class?.code || 'Encounter';
  return encounter.period?.start ? `${type}, ${formatDateTime(encounter.period.start)}` : type;
}

function ChargeTable({ charges, label }: { charges: ChargeItem[]; label: string }): ReactNode {
  if (charges.length === 0) return <Text size="sm">No charges captured</Text>;
  return (
    <ScrollRegion label={label}>
      <Table miw={460} striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Code</Table.Th>
            <Table.Th>Service</Table.Th>
            <Table.Th>Units</Table.Th>
            <Table.Th>Amount</Table.Th>
            <Table.Th>Status</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {charges.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>{c.code.coding?.[0]?.code}</Table.Td>
              <Table.Td>{formatCodeableConcept(c.code)}</Table.Td>
              <Table.Td>{c.quantity?.value ?? 1}</Table.Td>
              <Table.Td>{c.priceOverride ? formatMoney(c.priceOverride) : 'Not priced'}</Table.Td>
              <Table.Td>
                <Badge
                  size="sm"
                  variant="light"
                  color={c.status === 'billed' ? 'blue' : c.status === 'billable' ? 'green' : 'gray'}
                >
                  {c.status}
                </Badge>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </ScrollRegion>
  );
}

/** One encounter: its charges (capture them), its claims (build one). */
function EncounterBilling({ encounter }: { encounter: Encounter }): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [version, setVersion] = useState(0);
  const [warnings, setWarnings] = useState<OperationOutcomeIssue[]>([]);
  const ref = `Encounter/${encounter.id as string}`;
  const title = encounterTitle(encounter);
  const data = useAsync(async () => {
    const [charges, claims] = await Promise.all([
      client.search('ChargeItem', { context: ref, _count: '100' }, { cache: 'no-cache' }),
      client.search('Claim', { encounter: ref, _sort: '-_lastUpdated', _count: '20' }, { cache: 'no-cache' }),
    ]);
    return {
      charges: (charges.entry ?? []).map((e) => e.resource as ChargeItem).filter((c) => c.status !== 'aborted'),
      claims: (claims.entry ?? []).map((e) => e.resource as Claim),
    };
  }, `${ref}/${version}`);
  const reload = () => setVersion((v) => v + 1);
  const capture = () =>
    action.run(async () => {
      const answer = await captureCharges(client, encounter.id as string);
      setWarnings(answer.warnings);
      client.invalidateSearches('ChargeItem');
      reload();
    });
  const build = () =>
    action.run(async () => {
      await buildClaim(client, encounter.id as string);
      client.invalidateSearches('Claim');
      reload();
    });
  const charges = data.data?.charges ?? [];
  const claims = data.data?.claims ?? [];
  const submitted = claims.some((c) => c.status === 'active');
  return (
    <Card withBorder padding="sm" component="section" aria-label={`Billing for ${title}`}>
      <Stack gap="xs">
        <Title order={5} style={{ overflowWrap: 'anywhere' }}>
          {title}
        </Title>
        <ChargeTable charges={charges} label={`Charges of ${title}`} />
        {warnings.length > 0 && (
          <Alert color="orange" title="Charges to look at">
            <List size="sm">
              {warnings.map((w, i) => (
                <List.Item key={i}>{w.details?.text}</List.Item>
              ))}
            </List>
          </Alert>
        )}
        <OperationOutcomeAlert error={action.error ?? data.error} />
        <Group gap="xs">
          <Button size="xs" variant="light" onClick={capture} loading={action.busy}>
            Capture charges
          </Button>
          {!submitted && charges.some((c) => c.status === 'billable') && (
            <Button size="xs" onClick={build} loading={action.busy}>
              {claims.some((c) => c.status === 'draft') ? 'Rebuild claim' : 'Build claim'}
            </Button>
          )}
        </Group>
        {claims.map((claim) => (
          <ClaimCard key={`${claim.id}/${claim.meta?.versionId ?? ''}`} claim={claim} onChanged={reload} />
        ))}
      </Stack>
    </Card>
  );
}

/** The patient's encounters, newest first, each with its charges and claims. */
export function EncounterCharges({ patientId }: EncounterChargesProps): ReactNode {
  const client = useHearth();
  const encounters = useAsync(
    () =>
      client.search(
        'Encounter',
        { subject: `Patient/${patientId}`, _sort: '-date', _count: '20' },
        { cache: 'no-cache' },
      ),
    patientId,
  );
  const list = (encounters.data?.entry ?? []).map((e) => e.resource as Encounter);
  return (
    <Stack gap="sm">
      <Title order={4}>Charges and claims</Title>
      <OperationOutcomeAlert error={encounters.error} />
      {encounters.data && list.length === 0 && <Text size="sm">No encounters</Text>}
      {list.map((e) => (
        <EncounterBilling key={e.id} encounter={e} />
      ))}
    </Stack>
  );
}
