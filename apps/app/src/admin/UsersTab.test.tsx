// @vitest-environment jsdom
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../../../../packages/react/src/test/render.js';
import type { ProjectAdminDetails } from './types.js';
import { UsersTab } from './UsersTab.js';

const MEMBERS: ProjectAdminDetails['members'] = [
  {
    id: 'm1',
    user: { reference: 'User/u1', display: 'admin@example.com' },
    profile: { reference: 'Practitioner/p1', display: 'Ada Admin' },
    admin: true,
    active: true,
    accessPolicy: { reference: 'AccessPolicy/ap2' },
    access: [{ policy: { reference: 'AccessPolicy/ap1' } }],
  },
  {
    id: 'm2',
    user: { reference: 'User/u2', display: 'grace@example.com' },
    profile: { reference: 'Practitioner/p2', display: 'Grace Hopper' },
    admin: false,
    active: true,
  },
];

const POLICIES = bundle([
  { resourceType: 'AccessPolicy', id: 'ap1', name: 'Nurses' },
  { resourceType: 'AccessPolicy', id: 'ap2', name: 'Front desk' },
]);

function forbidden(text: string) {
  return new Reply(403, {
    resourceType: 'OperationOutcome',
    issue: [{ severity: 'error', code: 'forbidden', details: { text } }],
  });
}

function setup(routes: Parameters<typeof mockClient>[0]) {
  const { client, requests } = mockClient({
    'GET /fhir/R4/AccessPolicy': () => POLICIES,
    // The profile badges read their resources; not needed here.
    'GET /fhir/R4/Practitioner/*': () => new Reply(404, undefined),
    ...routes,
  });
  const onChanged = vi.fn();
  renderWithHearth(<UsersTab projectId="pr1" members={MEMBERS} onChanged={onChanged} ownMembershipId="m1" />, client);
  return { requests, onChanged, user: userEvent.setup({ delay: null }) };
}

describe('UsersTab', () => {
  it('lists members with their display name and marks the own membership', () => {
    setup({});
    const table = screen.getByRole('table', { name: 'Project members' });
    const own = within(table).getByRole('row', { name: /admin@example\.com/ });
    expect(within(own).getByText('You')).toBeTruthy();
    expect(within(table).getByRole('row', { name: /grace@example\.com/ }).textContent).not.toContain('You');
  });

  it('edits a member: admin, inactive, an access policy and a label, then refreshes the list', async () => {
    const { requests, onChanged, user } = setup({
      'POST /admin/projects/pr1/members/m2': (req) => ({ resourceType: 'ProjectMembership', ...(req.body as object) }),
    });
    await user.click(screen.getByRole('button', { name: 'Edit Grace Hopper' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit member: Grace Hopper' });
    await user.click(within(dialog).getByLabelText('Project admin'));
    await user.click(within(dialog).getByLabelText(/^Active/));
    const display = within(dialog).getByLabelText(/^Display name/);
    await user.clear(display);
    await user.type(display, 'Rear Admiral Hopper');
    await user.click(within(dialog).getByRole('textbox', { name: 'Access policy' }));
    await user.click(await screen.findByRole('option', { name: 'Nurses' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(onChanged).toHaveBeenCalledTimes(1));
    const post = requests.find((r) => r.method === 'POST');
    expect(post?.url.pathname).toBe('/admin/projects/pr1/members/m2');
    expect(post?.body).toEqual({
      id: 'm2',
      admin: true,
      active: false,
      accessPolicy: { reference: 'AccessPolicy/ap1' },
      profile: { display: 'Rear Admiral Hopper' },
    });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('clears the access policy with None, and shows the server refusing, keeping the dialog open', async () => {
    const { requests, onChanged, user } = setup({
      'POST /admin/projects/pr1/members/m1': () =>
        forbidden('You cannot remove your own admin rights or deactivate your own membership'),
    });
    await user.click(screen.getByRole('button', { name: 'Edit Ada Admin' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/1 parameterised access policy/)).toBeTruthy();
    const policy = within(dialog).getByRole('textbox', { name: 'Access policy' });
    await waitFor(() => expect((policy as HTMLInputElement).value).toBe('Front desk'));
    await user.click(within(dialog).getByLabelText('Project admin'));
    await user.click(policy);
    await user.click(await screen.findByRole('option', { name: 'None' }));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));

    expect((await within(dialog).findByRole('alert')).textContent).toContain('cannot remove your own admin rights');
    expect(onChanged).not.toHaveBeenCalled();
    const body = requests.find((r) => r.method === 'POST')?.body;
    expect(body).toMatchObject({ admin: false, accessPolicy: null });
    // The parameterised policies are not this form's to change.
    expect(body).not.toHaveProperty('access');
    expect(screen.getByRole('dialog')).toBeTruthy();
  });

  it('removes a member after confirming, then refreshes the list', async () => {
    const { requests, onChanged, user } = setup({
      'DELETE /admin/projects/pr1/members/m2': () => ({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'information', code: 'informational' }],
      }),
    });
    await user.click(screen.getByRole('button', { name: 'Remove Grace Hopper' }));
    const dialog = await screen.findByRole('dialog', { name: 'Remove member' });
    expect(dialog.textContent).toContain('Remove Grace Hopper from this project?');
    expect(requests.some((r) => r.method === 'DELETE')).toBe(false);
    await user.click(within(dialog).getByRole('button', { name: 'Remove' }));

    await waitFor(() => expect(onChanged).toHaveBeenCalledTimes(1));
    expect(requests.filter((r) => r.method === 'DELETE').map((r) => r.url.pathname)).toEqual([
      '/admin/projects/pr1/members/m2',
    ]);
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it("shows the server's refusal to remove, and Cancel sends nothing", async () => {
    const { requests, onChanged, user } = setup({
      'DELETE /admin/projects/pr1/members/m1': () => forbidden('You cannot remove your own membership'),
    });
    await user.click(screen.getByRole('button', { name: 'Remove Ada Admin' }));
    let dialog = await screen.findByRole('dialog', { name: 'Remove member' });
    await user.click(within(dialog).getByRole('button', { name: 'Remove' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('You cannot remove your own membership');
    expect(onChanged).not.toHaveBeenCalled();

    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await user.click(screen.getByRole('button', { name: 'Remove Grace Hopper' }));
    dialog = await screen.findByRole('dialog', { name: 'Remove member' });
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
  });
});
