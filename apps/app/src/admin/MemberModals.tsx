import { Button, Checkbox, Group, Loader, Modal, Select, Stack, Switch, Text, TextInput } from '@mantine/core';
import type { Resource } from '@hearth/core';
import { OperationOutcomeAlert, useAction, useAsync, useHearth } from '@hearth/react';
import type { ReactNode } from 'react';
import type { ProjectAdminDetails } from './types.js';
import { useFields } from '../use-fields.js';

export type Member = ProjectAdminDetails['members'][number];

/** How a member is named in lists and dialogs: the profile's label, else the user's. */
export function memberName(m: Member): string {
  return m.profile?.display ?? m.user?.display ?? m.profile?.reference ?? m.user?.reference ?? m.id;
}

/**
 * Edits a membership: admin flag, active flag, access policy (one of the project's, or none) and
 * the profile's label. The server decides what is allowed (owner, own membership, last admin) and
 * its outcome is shown as is.
 */
export function EditMemberModal(props: {
  projectId: string;
  member: Member;
  onClose: () => void;
  onSaved: () => void;
}): ReactNode {
  const { projectId, member } = props;
  const client = useHearth();
  const policies = useAsync<Resource[]>(
    async () => (await client.searchResources('AccessPolicy', { _count: '200' }, { cache: 'no-cache' })) as Resource[],
    'member-policies',
  );
  const form = useFields({
    display: member.profile?.display ?? '',
    admin: member.admin === true,
    active: member.active !== false,
    accessPolicy: member.accessPolicy?.reference ?? '',
  });
  const { busy, error, submit } = useAction();
  const options = [
    { value: '', label: 'None' },
    ...(policies.data ?? []).map((p) => ({ value: `AccessPolicy/${p.id}`, label: String(p.name ?? p.id) })),
  ];
  // A policy the list did not return (more than 200, or unreadable) still shows as selected.
  if (form.values.accessPolicy && !options.some((o) => o.value === form.values.accessPolicy)) {
    options.push({ value: form.values.accessPolicy, label: member.accessPolicy?.display ?? form.values.accessPolicy });
  }
  return (
    <Modal opened onClose={props.onClose} title={`Edit member: ${memberName(member)}`}>
      <form
        aria-label="Edit member"
        onSubmit={submit(async () => {
          await client.updateProjectMember(projectId, {
            id: member.id,
            admin: form.values.admin,
            active: form.values.active,
            accessPolicy: form.values.accessPolicy ? { reference: form.values.accessPolicy } : null,
            ...(member.profile ? { profile: { display: form.values.display.trim() } } : {}),
          });
          props.onSaved();
        })}
      >
        <Stack gap="sm">
          {member.profile && (
            <TextInput
              label="Display name"
              description="How this member is labelled in lists; empty shows the profile's own name"
              {...form.text('display')}
            />
          )}
          <Checkbox label="Project admin" {...form.checkbox('admin')} />
          <Switch
            label="Active"
            description="An inactive member cannot sign in to this project"
            {...form.checkbox('active')}
          />
          <Select
            label="Access policy"
            data={options}
            value={form.values.accessPolicy}
            allowDeselect={false}
            disabled={policies.loading && !policies.data}
            rightSection={policies.loading && !policies.data ? <Loader size="xs" /> : undefined}
            onChange={(v) => form.setValues({ ...form.values, accessPolicy: v ?? '' })}
          />
          {!!member.access?.length && (
            <Text size="sm" c="dimmed">
              Also has {member.access.length} parameterised access {member.access.length === 1 ? 'policy' : 'policies'},
              kept as they are.
            </Text>
          )}
          {policies.error !== undefined && <OperationOutcomeAlert error={policies.error} />}
          <OperationOutcomeAlert error={error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={props.onClose} disabled={busy}>
              Cancel
            </Button>
            <Button type="submit" loading={busy}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}

/** Asks before removing a member; the server refuses for the owner, oneself and the last admin. */
export function RemoveMemberModal(props: {
  projectId: string;
  member: Member;
  onClose: () => void;
  onRemoved: () => void;
}): ReactNode {
  const { projectId, member } = props;
  const client = useHearth();
  const { busy, error, run: runAction } = useAction();
  return (
    <Modal opened onClose={props.onClose} title="Remove member">
      <Stack gap="sm">
        <Text>
          Remove <b>{memberName(member)}</b> from this project? They lose access to it at once; their user account and
          profile stay.
        </Text>
        <OperationOutcomeAlert error={error} />
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose} disabled={busy}>
            Cancel
          </Button>
          <Button
            color="red"
            loading={busy}
            onClick={async () => {
              await runAction(async () => {
                await client.removeProjectMember(projectId, member.id);
                props.onRemoved();
              });
            }}
          >
            Remove
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
