import {
  Badge,
  Button,
  Checkbox,
  Group,
  Paper,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { ScrollRegion } from '../components/ScrollRegion.js';
import { OperationOutcomeAlert, ResourceBadge, useAction, useHearth } from '@hearth/react';
import type { ProjectAdminDetails } from './types.js';
import { useState, type ReactNode } from 'react';
import { EditMemberModal, memberName, RemoveMemberModal, type Member } from './MemberModals.js';
import { useFields } from '../use-fields.js';

/**
 * Project members (from GET /admin/projects/{id}) with their edit and remove actions
 * (/members/{membershipId}), and the invite form (POST /admin/projects/{id}/invite).
 */
export function UsersTab(props: {
  projectId: string;
  members: ProjectAdminDetails['members'];
  onChanged: () => void;
  /** The signed-in admin's own membership, marked in the list. */
  ownMembershipId?: string;
}): ReactNode {
  const { projectId, members } = props;
  const [editing, setEditing] = useState<Member | undefined>(undefined);
  const [removing, setRemoving] = useState<Member | undefined>(undefined);
  const client = useHearth();
  const form = useFields({
    resourceType: 'Practitioner',
    firstName: '',
    lastName: '',
    email: '',
    admin: false,
    sendEmail: false,
  });
  const { busy, error, submit } = useAction();
  const [invited, setInvited] = useState<string | undefined>(undefined);
  return (
    <Stack>
      <ScrollRegion label="Project members, scrollable">
        <Table striped aria-label="Project members">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Profile</Table.Th>
              <Table.Th>Display name</Table.Th>
              <Table.Th>User</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Access policy</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {members.map((m) => (
              <Table.Tr key={m.id}>
                <Table.Td>{m.profile ? <ResourceBadge value={m.profile} /> : '—'}</Table.Td>
                <Table.Td>{m.profile?.display ?? '—'}</Table.Td>
                <Table.Td>
                  {m.user?.display ?? m.user?.reference}
                  {m.id === props.ownMembershipId && (
                    <Badge ml="xs" variant="outline" size="sm">
                      You
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>{m.admin ? <Badge>Admin</Badge> : 'Member'}</Table.Td>
                <Table.Td>{m.accessPolicy ? <ResourceBadge value={m.accessPolicy} avatar={false} /> : '—'}</Table.Td>
                <Table.Td>
                  {m.invited ? (
                    <Badge color="yellow">Invitation pending</Badge>
                  ) : m.active === false ? (
                    <Badge color="gray">Inactive</Badge>
                  ) : (
                    <Badge color="green">Active</Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      size="compact-sm"
                      variant="light"
                      aria-label={`Edit ${memberName(m)}`}
                      onClick={() => setEditing(m)}
                    >
                      Edit
                    </Button>
                    <Button
                      size="compact-sm"
                      variant="light"
                      color="red"
                      aria-label={`Remove ${memberName(m)}`}
                      onClick={() => setRemoving(m)}
                    >
                      Remove
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollRegion>
      {editing && (
        <EditMemberModal
          projectId={projectId}
          member={editing}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            props.onChanged();
          }}
        />
      )}
      {removing && (
        <RemoveMemberModal
          projectId={projectId}
          member={removing}
          onClose={() => setRemoving(undefined)}
          onRemoved={() => {
            setRemoving(undefined);
            props.onChanged();
          }}
        />
      )}
      <Paper withBorder p="md" maw={640}>
        <Title order={4} mb="sm">
          Invite a user
        </Title>
        <form
          onSubmit={submit(async () => {
            const { admin, ...rest } = form.values;
            const membership = await client.invite(projectId, {
              ...rest,
              resourceType: rest.resourceType as 'Practitioner',
              email: rest.email.trim(),
              membership: { admin },
            });
            setInvited(`${form.values.firstName} ${form.values.lastName} (${membership.id ?? 'invited'})`);
            form.setValues({ ...form.values, firstName: '', lastName: '', email: '' });
            props.onChanged();
          })}
        >
          <Stack gap="sm">
            <Select
              label="Profile type"
              data={['Practitioner', 'Patient', 'RelatedPerson']}
              value={form.values.resourceType}
              allowDeselect={false}
              onChange={(v) => v && form.setValues({ ...form.values, resourceType: v })}
            />
            <Group grow>
              <TextInput label="First name" required {...form.text('firstName')} />
              <TextInput label="Last name" required {...form.text('lastName')} />
            </Group>
            <TextInput label="Email" type="email" required {...form.text('email')} />
            <Group>
              <Checkbox label="Project admin" {...form.checkbox('admin')} />
              <Checkbox label="Send invitation email" {...form.checkbox('sendEmail')} />
            </Group>
            <OperationOutcomeAlert error={error} />
            {invited && (
              <Text c="green" role="status">
                Invited {invited}
              </Text>
            )}
            <Button type="submit" loading={busy} w="fit-content">
              Invite
            </Button>
          </Stack>
        </form>
      </Paper>
    </Stack>
  );
}
