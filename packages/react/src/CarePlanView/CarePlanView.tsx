import { Anchor, Badge, Card, Group, Loader, Paper, Progress, Stack, Table, Text, Title } from '@mantine/core';
import {
  formatCodeableConcept,
  formatDate,
  formatDateTime,
  formatQuantity,
  formatRange,
  type Goal,
  type Task,
} from '@hearth/core';
import type { ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import { STATUS_COLORS, taskTitle } from '../TaskWorklist/TaskWorklist.js';
import { taskDue } from '../TaskWorklist/worklist.js';
import { flattenActions, loadCarePlan, periodText, planProgress, type PlanProgress } from './careplan.js';

export interface CarePlanViewProps {
  carePlanId: string;
  /** Changes when the plan's tasks may have changed elsewhere, to load again. */
  version?: number;
  /** Opens the task work list. */
  onOpenTasks?: () => void;
  /** Fixed chart width (tests); default: the container's. */
  chartWidth?: number;
}

const GOAL_COLORS: Record<string, string> = {
  active: 'blue',
  proposed: 'gray',
  planned: 'gray',
  accepted: 'cyan',
  'on-hold': 'yellow',
  completed: 'green',
  cancelled: 'red',
};

/**
 * A care plan for people: its title, status and period, its goals (description, targets,
 * lifecycle and achievement), its activities (the plan's Tasks) with their status, and how far
 * it has come: completed against remaining activities, per week of due date, as a stacked bar chart.
 */
export function CarePlanView({ carePlanId, version = 0, onOpenTasks, chartWidth }: CarePlanViewProps): ReactNode {
  const client = useHearth();
  const loaded = useAsync(() => loadCarePlan(client, carePlanId), `${carePlanId}/${version}`);
  if (loaded.error) return <OperationOutcomeAlert error={loaded.error} />;
  if (!loaded.data) return <Loader aria-label="Loading care plan" />;
  const { plan, goals, tasks, requestGroups } = loaded.data;
  const progress = planProgress(tasks);
  const title = plan.title ?? 'Care plan';
  return (
    <Stack gap="md">
      <div>
        <Group gap="xs" wrap="wrap">
          <Title order={2} style={{ overflowWrap: 'anywhere' }}>
            {title}
          </Title>
          <Badge
            color={plan.status === 'active' ? 'green' : 'gray'}
            variant="light"
            aria-label={`Plan status ${plan.status}`}
          >
            {plan.status}
          </Badge>
        </Group>
        <Text size="sm" c="dimmed">
          {periodText(plan.period) || 'No period'}
          {plan.created ? ` · created ${formatDateTime(plan.created, undefined, { dateStyle: 'medium' })}` : ''}
        </Text>
        {plan.description && <Text size="sm">{plan.description}</Text>}
      </div>

      <ProgressSection progress={progress} chartWidth={chartWidth} />

      <section aria-label="Goals">
        <Title order={3} mb="xs">
          Goals ({goals.length})
        </Title>
        {goals.length === 0 ? (
          <Text size="sm" c="dimmed">
            No goals.
          </Text>
        ) : (
          <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
            {goals.map((g) => (
              <GoalCard key={g.id} goal={g} />
            ))}
          </Stack>
        )}
      </section>

      <section aria-label="Activities">
        <Group justify="space-between" wrap="wrap" mb="xs">
          <Title order={3}>Activities ({tasks.length})</Title>
          {onOpenTasks && (
            <Anchor component="button" type="button" onClick={onOpenTasks}>
              Work them in the task list
            </Anchor>
          )}
        </Group>
        {requestGroups.map((g) => (
          <Text key={g.id} size="sm" c="dimmed">
            Order set{g.code ? ` ${formatCodeableConcept(g.code)}` : ''}:{' '}
            {flattenActions(g.action ?? []).filter((a) => a.resource).length} activities ({g.status})
          </Text>
        ))}
        {tasks.length === 0 ? (
          <Text size="sm" c="dimmed">
            No activities.
          </Text>
        ) : (
          <Stack gap="sm" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
            {tasks.map((t) => (
              <ActivityRow key={t.id} task={t} />
            ))}
          </Stack>
        )}
      </section>
    </Stack>
  );
}

function ProgressSection({ progress, chartWidth }: { progress: PlanProgress; chartWidth?: number }): ReactNode {
  const summary = `${progress.completed} of ${progress.completed + progress.remaining} activities completed (${progress.percent}%)${
    progress.cancelled ? `, ${progress.cancelled} cancelled` : ''
  }`;
  const chart = (
    <BarChart
      width={chartWidth}
      height={chartWidth ? 220 : undefined}
      data={progress.rows}
      margin={{ top: 8, right: 8, bottom: 8, left: 0 }}
    >
      <CartesianGrid strokeDasharray="3 3" />
      <XAxis dataKey="label" tick={{ fontSize: 11 }} />
      <YAxis allowDecimals={false} width={32} />
      <Tooltip />
      <Legend />
      <Bar dataKey="completed" name="Completed" stackId="a" fill="#2f9e44" isAnimationActive={false} />
      <Bar dataKey="remaining" name="Remaining" stackId="a" fill="#1c7ed6" isAnimationActive={false} />
      <Bar dataKey="cancelled" name="Cancelled" stackId="a" fill="#868e96" isAnimationActive={false} />
    </BarChart>
  );
  return (
    <Paper withBorder p="sm" role="figure" aria-label="Activity progress chart">
      <Title order={3} size="h4">
        Progress
      </Title>
      <Text size="sm" role="status">
        {summary}
      </Text>
      <Progress value={progress.percent} color="green" my="xs" aria-label={`Plan progress ${progress.percent}%`} />
      {progress.total === 0 ? (
        <Text size="sm" c="dimmed">
          Nothing to chart yet.
        </Text>
      ) : chartWidth ? (
        chart
      ) : (
        <ResponsiveContainer width="100%" height={220}>
          {chart}
        </ResponsiveContainer>
      )}
      {progress.total > 0 && (
        <Table.ScrollContainer minWidth={0}>
          <Table fz="xs" aria-label="Activities by week" withRowBorders={false}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Due</Table.Th>
                <Table.Th>Completed</Table.Th>
                <Table.Th>Remaining</Table.Th>
                <Table.Th>Cancelled</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {progress.rows.map((r) => (
                <Table.Tr key={r.week}>
                  <Table.Td>{r.label}</Table.Td>
                  <Table.Td>{r.completed}</Table.Td>
                  <Table.Td>{r.remaining}</Table.Td>
                  <Table.Td>{r.cancelled}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Paper>
  );
}

/** A goal target as text: "HbA1c < 7 %, by 2026-06-01". */
export function targetText(target: NonNullable<Goal['target']>[number]): string {
  const measure = formatCodeableConcept(target.measure);
  const detail = target.detailQuantity
    ? formatQuantity(target.detailQuantity)
    : target.detailRange
      ? formatRange(target.detailRange)
      : target.detailCodeableConcept
        ? formatCodeableConcept(target.detailCodeableConcept)
        : (target.detailString ?? '');
  const due = target.dueDate ? `by ${formatDate(target.dueDate, undefined, { dateStyle: 'medium' })}` : '';
  return [[measure, detail].filter(Boolean).join(' '), due].filter(Boolean).join(', ');
}

function GoalCard({ goal }: { goal: Goal }): ReactNode {
  const name = formatCodeableConcept(goal.description) || 'Goal';
  const achievement = formatCodeableConcept(goal.achievementStatus);
  return (
    <Card withBorder component="li" aria-label={name} padding="sm">
      <Group gap="xs" wrap="wrap">
        <Text fw={600} style={{ overflowWrap: 'anywhere' }}>
          {name}
        </Text>
        <Badge color={GOAL_COLORS[goal.lifecycleStatus] ?? 'gray'} variant="light">
          {goal.lifecycleStatus}
        </Badge>
        {achievement && (
          <Badge color={/achieved|improving/i.test(achievement) ? 'green' : 'orange'} variant="outline">
            {achievement}
          </Badge>
        )}
      </Group>
      {(goal.target ?? []).map((t, i) => (
        <Text key={i} size="sm">
          {`Target: ${targetText(t)}`}
        </Text>
      ))}
      {goal.startDate && (
        <Text size="xs" c="dimmed">
          Since {formatDate(goal.startDate, undefined, { dateStyle: 'medium' })}
        </Text>
      )}
    </Card>
  );
}

function ActivityRow({ task }: { task: Task }): ReactNode {
  const title = taskTitle(task);
  const due = taskDue(task);
  return (
    <li aria-label={title}>
      <Group gap="xs" wrap="wrap" justify="space-between">
        <Group gap="xs" wrap="wrap" style={{ minWidth: 0 }}>
          <Badge color={STATUS_COLORS[task.status] ?? 'gray'} variant="light" aria-label={`Status ${task.status}`}>
            {task.status}
          </Badge>
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {title}
          </Text>
        </Group>
        <Group gap={6} wrap="wrap">
          <Text size="xs" c="dimmed">
            {due ? `Due ${formatDateTime(due, undefined, { dateStyle: 'medium' })}` : 'No due date'}
          </Text>
          {task.owner && <ResourceBadge value={task.owner} avatar={false} link={false} />}
        </Group>
      </Group>
      {task.statusReason && (
        <Text size="xs" c="dimmed">
          Reason: {formatCodeableConcept(task.statusReason)}
        </Text>
      )}
    </li>
  );
}
