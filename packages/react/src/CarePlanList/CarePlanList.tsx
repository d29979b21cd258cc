import { Anchor, Badge, Button, Card, Group, Progress, Select, Stack, Text, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import {
  type CarePlan,
  type HearthClient,
  type Parameters,
  type PlanDefinition,
  type Reference,
  type Task,
} from '@hearth/core';
import { useEffect, useState, type ReactNode } from 'react';
import { periodText, planProgress } from '../CarePlanView/careplan.js';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { serverSearchProps } from '../util/server-search.js';

export interface CarePlanListProps {
  patientId: string;
  /** Opens a plan. */
  onOpen?: (carePlanId: string) => void;
  /** Changes when a plan was added elsewhere, to search again. */
  version?: number;
}

/** A patient's care plans, newest first, each with its activities' progress (one search, `_revinclude=Task:based-on`). */
export function CarePlanList({ patientId, onOpen, version = 0 }: CarePlanListProps): ReactNode {
  const client = useHearth();
  const found = useAsync(
    () =>
      client.search(
        'CarePlan',
        { subject: `Patient/${patientId}`, _sort: '-_lastUpdated', _count: '100', _revinclude: 'Task:based-on' },
        { cache: 'no-cache' },
      ),
    `${patientId}/${version}`,
  );
  const entries = found.data?.entry ?? [];
  const plans = entries.map((e) => e.resource).filter((r): r is CarePlan => r?.resourceType === 'CarePlan');
  const tasks = entries
    .map((e) => e.resource as Task | CarePlan | undefined)
    .filter((r): r is Task => r?.resourceType === 'Task');
  if (found.error) return <OperationOutcomeAlert error={found.error} />;
  if (!found.data) return <Text c="dimmed">Loading care plans…</Text>;
  if (plans.length === 0) return <Text c="dimmed">No care plan yet.</Text>;
  return (
    <Stack gap="xs" component="ul" aria-label="Care plans" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
      {plans.map((plan) => {
        const progress = planProgress(
          tasks.filter((t) => t.basedOn?.some((r) => r.reference === `CarePlan/${plan.id}`)),
        );
        const title = plan.title ?? 'Care plan';
        return (
          <Card key={plan.id} withBorder component="li" aria-label={title} padding="sm">
            <Group justify="space-between" wrap="wrap" gap="xs">
              <div style={{ minWidth: 0 }}>
                <Group gap="xs" wrap="wrap">
                  {onOpen ? (
                    <Anchor component="button" type="button" fw={600} onClick={() => onOpen(plan.id as string)}>
                      {title}
                    </Anchor>
                  ) : (
                    <Text fw={600}>{title}</Text>
                  )}
                  <Badge color={plan.status === 'active' ? 'green' : 'gray'} variant="light">
                    {plan.status}
                  </Badge>
                </Group>
                <Text size="sm" c="dimmed">
                  {periodText(plan.period)}
                </Text>
              </div>
              <Text size="sm">
                {progress.completed} of {progress.completed + progress.remaining} activities done
                {progress.cancelled ? ` (${progress.cancelled} cancelled)` : ''}
              </Text>
            </Group>
            <Progress
              value={progress.percent}
              color="green"
              mt={6}
              aria-label={`${title} progress ${progress.percent}%`}
            />
          </Card>
        );
      })}
    </Stack>
  );
}

/** Calls PlanDefinition/{id}/$apply for a patient (hl7.org/fhir/R4/plandefinition-operation-apply.html); resolves with the CarePlan. */
export async function applyPlan(
  client: HearthClient,
  planDefinitionId: string,
  patientId: string,
  practitioner?: Reference,
): Promise<CarePlan> {
  const body: Parameters = {
    resourceType: 'Parameters',
    parameter: [
      { name: 'subject', valueReference: { reference: `Patient/${patientId}` } },
      ...(practitioner?.reference?.startsWith('Practitioner/')
        ? [{ name: 'practitioner', valueReference: { reference: practitioner.reference } }]
        : []),
    ],
  };
  const plan = await client.post<CarePlan>(client.fhirUrl('PlanDefinition', planDefinitionId, '$apply'), body);
  client.invalidateSearches('CarePlan');
  client.invalidateSearches('Task');
  client.invalidateSearches('Goal');
  return plan;
}

export interface ApplyPlanFormProps {
  patientId: string;
  /** The practitioner applying it: the plan's author and the owner of practitioner actions. */
  practitioner?: Reference;
  onApplied: (plan: CarePlan) => void;
}

/** Picks an active PlanDefinition by title as one types, and applies it to the patient. */
export function ApplyPlanForm({ patientId, practitioner, onApplied }: ApplyPlanFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 250);
  const [chosen, setChosen] = useState<string | null>(null);
  const [options, setOptions] = useState<{ value: string; label: string }[]>([]);
  const [loading, setLoading] = useState(false);
  useEffect(() => {
    let live = true;
    setLoading(true);
    const query: Record<string, string> = { status: 'active,draft', _count: '10', _sort: 'title' };
    if (debounced && !options.some((o) => o.label === debounced)) query['title:contains'] = debounced;
    client
      .searchResources('PlanDefinition', query, { cache: 'no-cache' })
      .then((found) => {
        if (!live) return;
        setOptions(
          (found as PlanDefinition[]).map((d) => ({
            value: d.id as string,
            label: `${d.title ?? d.name ?? d.id}${d.version ? ` (v${d.version})` : ''}`,
          })),
        );
      })
      .catch(() => live && setOptions([]))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
    // Options are read only to tell a chosen label from typed text: not a reason to search again.
  }, [client, debounced]);
  return (
    <form
      aria-label="Apply a plan"
      onSubmit={action.submit(async () => {
        if (!chosen) throw new Error('Choose a plan definition to apply');
        onApplied(await applyPlan(client, chosen, patientId, practitioner));
      })}
    >
      <Title order={4} mb="xs">
        Apply a plan
      </Title>
      <Group align="flex-end" gap="xs" wrap="wrap">
        <Select
          label="Plan definition"
          placeholder="Type to search plan definitions"
          {...serverSearchProps({
            label: 'Plan definition',
            search,
            onSearchChange: setSearch,
            loading,
            nothingFound: 'No plan definition matches',
          })}
          data={options}
          value={chosen}
          onChange={setChosen}
          style={{ flex: '1 1 240px', minWidth: 0 }}
        />
        <Button type="submit" loading={action.busy}>
          Apply plan
        </Button>
      </Group>
      <OperationOutcomeAlert error={action.error} />
    </form>
  );
}
