import { Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { type Coverage, type Resource } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { coverageText } from '../CoverageSummary/CoverageSummary.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { coverageInForce } from '../util/billing.js';
import { CoverageForm } from './CoverageForm.js';

export interface CoverageListProps {
  patientId: string;
  /** Called after a coverage is added or changed. */
  onChange?: () => void;
}

/** The patient's coverages, whether each is in force today, with add and edit. */
export function CoverageList({ patientId, onChange }: CoverageListProps): ReactNode {
  const client = useHearth();
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState<Coverage | 'new' | undefined>(undefined);
  const found = useAsync(
    () =>
      client.search(
        'Coverage',
        { beneficiary: `Patient/${patientId}`, _include: 'Coverage:payor', _count: '50' },
        { cache: 'no-cache' },
      ),
    `${patientId}/${version}`,
  );
  const resources = (found.data?.entry ?? []).map((e) => e.resource as Resource);
  const coverages = resources.filter((r): r is Coverage => r.resourceType === 'Coverage');
  const payerOf = (c: Coverage) => resources.find((r) => `Organization/${r.id}` === c.payor?.[0]?.reference);
  const today = new Date().toISOString().slice(0, 10);
  const saved = () => {
    setEditing(undefined);
    setVersion((v) => v + 1);
    onChange?.();
  };
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={4}>Coverage</Title>
        {!editing && (
          <Button variant="light" onClick={() => setEditing('new')}>
            Add coverage
          </Button>
        )}
      </Group>
      <OperationOutcomeAlert error={found.error} />
      {found.data && coverages.length === 0 && <Text size="sm">No coverage recorded</Text>}
      <Stack gap="xs" role="list" aria-label="Coverages">
        {coverages.map((c) => (
          <Card key={c.id} withBorder padding="sm" role="listitem">
            <Group justify="space-between" wrap="wrap" gap="xs">
              <div style={{ minWidth: 0 }}>
                <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {coverageText(c, payerOf(c))}
                </Text>
                <Badge size="sm" variant="light" color={coverageInForce(c, today) ? 'green' : 'gray'}>
                  {coverageInForce(c, today) ? 'In force' : c.status === 'active' ? 'Not in force today' : c.status}
                </Badge>
              </div>
              {!editing && (
                <Button
                  size="xs"
                  variant="default"
                  onClick={() => setEditing(c)}
                  aria-label={`Edit coverage ${c.subscriberId ?? c.id}`}
                >
                  Edit
                </Button>
              )}
            </Group>
          </Card>
        ))}
      </Stack>
      {editing && (
        <Card withBorder padding="sm">
          <CoverageForm
            key={editing === 'new' ? 'new' : editing.id}
            patientId={patientId}
            coverage={editing === 'new' ? undefined : editing}
            onSaved={saved}
            onCancel={() => setEditing(undefined)}
          />
        </Card>
      )}
    </Stack>
  );
}
