import {
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  Loader,
  MultiSelect,
  SegmentedControl,
  Select,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { formatCodeableConcept, formatDateTime, getDisplayString, type Reference, type Task } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { ResourceBadge } from '../ResourceBadge/ResourceBadge.js';
import {
  cancelledTask,
  claimedTask,
  completedTask,
  dueBucket,
  loadTeams,
  loadWorklist,
  OPEN_TASK_STATUSES,
  startedTask,
  TASK_STATUSES,
  taskActions,
  taskDue,
  TaskConflictError,
  updateTask,
  type DueFilter,
  type WorklistItem,
  type WorklistScope,
} from './worklist.js';

export interface TaskWorklistProps {
  /** The signed-in practitioner (with a display: it becomes the owner's name on claimed tasks). */
  practitioner: Reference;
  /** The teams whose tasks the "team" view lists; default: found from PractitionerRoles and CareTeams. */
  teams?: Reference[];
  /** Opens a task's patient. */
  onOpenPatient?: (patientId: string) => void;
  /** Opens the care plan a task belongs to. */
  onOpenPlan?: (carePlanId: string) => void;
  /** Called after each change of a task. */
  onChanged?: (task: Task) => void;
}

const DUE_CHOICES: { value: DueFilter; label: string }[] = [
  { value: 'any', label: 'Any due date' },
  { value: 'overdue', label: 'Overdue' },
  { value: 'today', label: 'Due today (or overdue)' },
  { value: 'week', label: 'Due within 7 days' },
  { value: 'none', label: 'No due date' },
];

export const STATUS_COLORS: Record<string, string> = {
  requested: 'blue',
  received: 'blue',
  accepted: 'cyan',
  ready: 'cyan',
  'in-progress': 'yellow',
  'on-hold': 'gray',
  completed: 'green',
  cancelled: 'red',
  failed: 'red',
  rejected: 'red',
};

/**
 * A practitioner's work list: their tasks or their teams' (with unassigned ones), filtered by
 * status and due date, earliest due first; each task can be claimed, started, completed or
 * cancelled with a reason. Every change is conditional on the version shown, so a task someone
 * else changed meanwhile is not overwritten: the list says what happened and shows it as it is.
 */
export function TaskWorklist({
  practitioner,
  teams,
  onOpenPatient,
  onOpenPlan,
  onChanged,
}: TaskWorklistProps): ReactNode {
  const client = useHearth();
  const [scope, setScope] = useState<WorklistScope>('mine');
  // No status chosen means every open status (the default view: work still to do).
  const [statuses, setStatuses] = useState<string[]>([]);
  const [due, setDue] = useState<DueFilter>('any');
  const [version, setVersion] = useState(0);
  const [conflict, setConflict] = useState<string | undefined>(undefined);
  const foundTeams = useAsync(
    teams ? async () => teams : () => loadTeams(client, practitioner),
    `${practitioner.reference}/${teams?.map((t) => t.reference).join(',') ?? ''}`,
  );
  const ready = foundTeams.data !== undefined;
  const list = useAsync(
    ready
      ? () =>
          loadWorklist(client, {
            scope,
            practitioner,
            teams: foundTeams.data ?? [],
            statuses,
            due,
          })
      : undefined,
    `${practitioner.reference}/${scope}/${statuses.join(',')}/${due}/${version}/${ready}`,
  );
  const items = list.data ?? [];
  const teamNames = (foundTeams.data ?? []).map((t) => t.display ?? t.reference).join(', ');
  return (
    <Stack gap="sm">
      <Group gap="sm" wrap="wrap" align="flex-end">
        <SegmentedControl
          aria-label="Whose tasks"
          value={scope}
          onChange={(v) => setScope(v as WorklistScope)}
          data={[
            { value: 'mine', label: 'My tasks' },
            { value: 'team', label: "My team's tasks" },
          ]}
        />
        <MultiSelect
          label="Status"
          data={TASK_STATUSES}
          value={statuses}
          onChange={setStatuses}
          placeholder={statuses.length ? undefined : 'Any open status'}
          clearable
          style={{ flex: '1 1 220px', minWidth: 0 }}
        />
        <Select
          label="Due"
          data={DUE_CHOICES}
          value={due}
          allowDeselect={false}
          onChange={(v) => setDue((v as DueFilter) ?? 'any')}
          style={{ flex: '0 1 220px', minWidth: 160 }}
        />
      </Group>
      {scope === 'team' && (
        <Text size="sm" c="dimmed">
          {teamNames ? `Teams: ${teamNames}, and unassigned tasks` : 'Unassigned tasks (you belong to no team)'}
        </Text>
      )}
      {conflict && (
        <Text role="alert" c="red.8" size="sm">
          {conflict}
        </Text>
      )}
      <OperationOutcomeAlert error={foundTeams.error ?? list.error} />
      {!list.data && !list.error ? (
        <Loader aria-label="Loading tasks" />
      ) : items.length === 0 ? (
        <Text role="status" c="dimmed">
          No task matches.
        </Text>
      ) : (
        <>
          <Text role="status" size="sm">
            {items.length} task{items.length === 1 ? '' : 's'}
            {list.data?.truncated ? ' (the first of more: narrow the status or due filters to see the rest)' : ''}
          </Text>
          <Stack gap="xs" component="ul" aria-label="Tasks" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
            {items.map((item) => (
              <TaskRow
                key={item.task.id}
                item={item}
                practitioner={practitioner}
                onOpenPatient={onOpenPatient}
                onOpenPlan={onOpenPlan}
                onDone={(task, message) => {
                  setConflict(message);
                  setVersion((v) => v + 1);
                  if (task) onChanged?.(task);
                }}
              />
            ))}
          </Stack>
        </>
      )}
    </Stack>
  );
}

/** A task's title: its description, else its code. */
export function taskTitle(task: Task): string {
  return task.description ?? (formatCodeableConcept(task.code) || 'Task');
}

function DueText({ task }: { task: Task }): ReactNode {
  const due = taskDue(task);
  if (!due) return <Text size="sm">No due date</Text>;
  const overdue = dueBucket(task) === 'overdue' && OPEN_TASK_STATUSES.includes(task.status);
  return (
    <Group gap={6} wrap="wrap">
      <Text size="sm">Due {formatDateTime(due, undefined, { dateStyle: 'medium', timeStyle: 'short' })}</Text>
      {overdue && (
        <Badge color="red" variant="filled" size="sm">
          Overdue
        </Badge>
      )}
    </Group>
  );
}

function TaskRow({
  item,
  practitioner,
  onOpenPatient,
  onOpenPlan,
  onDone,
}: {
  item: WorklistItem;
  practitioner: Reference;
  onOpenPatient?: (patientId: string) => void;
  onOpenPlan?: (carePlanId: string) => void;
  onDone: (task: Task | undefined, conflict?: string) => void;
}): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [cancelling, setCancelling] = useState(false);
  const [reason, setReason] = useState('');
  const { task, patient } = item;
  const title = taskTitle(task);
  const can = taskActions(task, practitioner);
  const plan = task.basedOn?.find((r) => r.reference?.startsWith('CarePlan/'))?.reference?.split('/')[1];
  const write = (next: () => Task) =>
    action.run(async () => {
      try {
        const saved = await updateTask(client, task, next());
        setCancelling(false);
        onDone(saved);
      } catch (err) {
        if (err instanceof TaskConflictError) {
          onDone(err.current, err.message);
          return;
        }
        throw err;
      }
    });
  return (
    <Card withBorder component="li" aria-label={title} padding="sm">
      <Stack gap={6}>
        <Group justify="space-between" wrap="wrap" gap="xs" align="flex-start">
          <div style={{ minWidth: 0, flex: '1 1 240px' }}>
            <Group gap="xs" wrap="wrap">
              <Text fw={600} style={{ overflowWrap: 'anywhere' }}>
                {title}
              </Text>
              <Badge color={STATUS_COLORS[task.status] ?? 'gray'} variant="light" aria-label={`Status ${task.status}`}>
                {task.status}
              </Badge>
              {task.priority && task.priority !== 'routine' && (
                <Badge color="orange" variant="outline">
                  {task.priority}
                </Badge>
              )}
            </Group>
            <DueText task={task} />
            <Group gap={6} wrap="wrap">
              {patient?.id && onOpenPatient ? (
                <Anchor component="button" type="button" size="sm" onClick={() => onOpenPatient(patient.id as string)}>
                  {getDisplayString(patient)}
                </Anchor>
              ) : (
                <Text size="sm">
                  {patient ? getDisplayString(patient) : (task.for?.display ?? task.for?.reference)}
                </Text>
              )}
              {plan && onOpenPlan && (
                <Anchor component="button" type="button" size="sm" onClick={() => onOpenPlan(plan)}>
                  Care plan
                </Anchor>
              )}
            </Group>
            <Group gap={6} wrap="wrap">
              <Text size="sm" c="dimmed">
                Owner:
              </Text>
              {task.owner ? (
                <ResourceBadge value={task.owner} avatar={false} link={false} />
              ) : (
                <Text size="sm" c="dimmed">
                  unassigned
                </Text>
              )}
            </Group>
            {task.statusReason && (
              <Text size="sm" c="dimmed">
                Reason: {formatCodeableConcept(task.statusReason)}
              </Text>
            )}
          </div>
          <Group gap="xs" wrap="wrap">
            {can.claim && (
              <Button
                size="xs"
                variant="light"
                loading={action.busy}
                onClick={() => write(() => claimedTask(task, practitioner))}
              >
                Claim
              </Button>
            )}
            {can.start && (
              <Button size="xs" variant="light" loading={action.busy} onClick={() => write(() => startedTask(task))}>
                Start
              </Button>
            )}
            {can.complete && (
              <Button size="xs" color="green" loading={action.busy} onClick={() => write(() => completedTask(task))}>
                Complete
              </Button>
            )}
            {can.cancel && !cancelling && (
              <Button size="xs" variant="subtle" color="red" onClick={() => setCancelling(true)}>
                Cancel task
              </Button>
            )}
          </Group>
        </Group>
        {cancelling && (
          <form
            aria-label={`Cancel ${title}`}
            onSubmit={(e) => {
              e.preventDefault();
              if (!reason.trim()) {
                action.setError(new Error('Give a reason for cancelling the task'));
                return;
              }
              void write(() => cancelledTask(task, reason));
            }}
          >
            <Group align="flex-end" gap="xs" wrap="wrap">
              <TextInput
                label="Reason for cancelling"
                value={reason}
                onChange={(e) => setReason(e.currentTarget.value)}
                style={{ flex: '1 1 180px', minWidth: 0 }}
              />
              <Button type="submit" size="sm" color="red" loading={action.busy}>
                Confirm cancel
              </Button>
              <Button size="sm" variant="default" onClick={() => setCancelling(false)}>
                Keep task
              </Button>
            </Group>
          </form>
        )}
        <OperationOutcomeAlert error={action.error} />
      </Stack>
    </Card>
  );
}
