import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, OWNER_HOLDS } from './fixtures';
import { PERMISSION_GROUPS } from './role-groups';
import { Roles } from './roles';

/** The permission catalog as `GET /authz/roles/available_permissions` answers it (docs/permissions.md). */
const CATALOG = [
  { namespace: 'org', action: 'edit', description: 'Edit the organization' },
  { namespace: 'org', action: 'admin', description: 'Administer organization membership' },
  { namespace: 'org', action: 'edit_branding_options', description: 'Edit the branding options' },
  {
    namespace: 'org',
    action: 'create_role',
    description: 'Create custom roles',
    associated: [{ namespace: 'role', action: 'view', required: true }],
  },
  { namespace: 'role', action: 'view', description: 'View custom roles' },
  {
    namespace: 'role',
    action: 'edit',
    description: 'Edit custom roles',
    associated: [{ namespace: 'role', action: 'view', required: true }],
  },
  {
    namespace: 'role',
    action: 'delete',
    description: 'Delete custom roles',
    associated: [{ namespace: 'role', action: 'view', required: true }],
  },
  {
    namespace: 'role',
    action: 'viewer',
    description: 'View the users and teams a custom role is assigned to',
    associated: [{ namespace: 'role', action: 'view', required: true }],
  },
  { namespace: 'team', action: 'list', description: 'List the teams' },
  { namespace: 'team', action: 'create', description: 'Create teams', associated: [{ namespace: 'team', action: 'view', required: true }] },
  { namespace: 'team', action: 'view', description: 'View teams' },
  { namespace: 'team', action: 'edit', description: 'Edit teams', associated: [{ namespace: 'team', action: 'view', required: true }] },
  { namespace: 'team', action: 'delete', description: 'Delete teams', associated: [{ namespace: 'team', action: 'view', required: true }] },
  {
    namespace: 'team',
    action: 'add',
    description: 'Add a user to a team',
    associated: [{ namespace: 'team', action: 'view', required: true }],
  },
  {
    namespace: 'team',
    action: 'remove',
    description: 'Remove a user from a team',
    associated: [{ namespace: 'team', action: 'view', required: true }],
  },
  {
    namespace: 'team-member',
    action: 'add',
    description: 'Add team members',
    associated: [{ namespace: 'team', action: 'view', required: true }],
  },
  {
    namespace: 'team-member',
    action: 'remove',
    description: 'Remove team members',
    associated: [{ namespace: 'team', action: 'view', required: true }],
  },
  { namespace: 'team-members', action: 'list', description: 'List team members' },
  { namespace: 'team-member', action: 'view', description: 'View a team member' },
  { namespace: 'avatar', action: 'view', description: 'View the avatar' },
  {
    namespace: 'avatar',
    action: 'update',
    description: 'Update the avatar',
    associated: [{ namespace: 'avatar', action: 'view', required: true }],
  },
  {
    namespace: 'avatar',
    action: 'delete',
    description: 'Delete the avatar',
    associated: [{ namespace: 'avatar', action: 'view', required: true }],
  },
  { namespace: 'sync-token', action: 'view', description: 'View the multi-cluster-manager sync token' },
  {
    namespace: 'manager-org-sync-token',
    action: 'create',
    description: 'Create the multi-cluster-manager sync token',
    associated: [{ namespace: 'sync-token', action: 'view', required: true }],
  },
  {
    namespace: 'manager-sync-token',
    action: 'remove',
    description: 'Remove the multi-cluster-manager sync token',
    associated: [{ namespace: 'sync-token', action: 'view', required: true }],
  },
  { namespace: 'access-token', action: 'list', description: 'List access tokens' },
  {
    namespace: 'access-token',
    action: 'delete',
    description: 'Delete access tokens',
    associated: [{ namespace: 'access-token', action: 'list', required: true }],
  },
  { namespace: 'bus-token', action: 'list', description: 'List message-bus tokens' },
  {
    namespace: 'bus-token',
    action: 'revoke',
    description: 'Revoke message-bus tokens',
    associated: [{ namespace: 'bus-token', action: 'list', required: true }],
  },
  { namespace: 'contract_mgmt', action: 'view_contracts', description: 'View contracts and their audit events' },
  {
    namespace: 'contract_mgmt',
    action: 'add_cluster',
    description: 'Assign clusters to contracts',
    associated: [{ namespace: 'contract_mgmt', action: 'view_contracts', required: true }],
  },
  { namespace: 'cluster', action: 'create', description: 'Enroll hub clusters of the organization' },
  {
    namespace: 'contracts',
    action: 'updated_preferences',
    description: 'Update contract preferences',
    associated: [{ namespace: 'contract_mgmt', action: 'view_contracts', required: true }],
  },
  {
    namespace: 'cluster',
    action: 'issue-license',
    description: 'Issue licenses for clusters',
    associated: [{ namespace: 'contract_mgmt', action: 'view_contracts', required: false }],
  },
];

const named = (p: { namespace: string; action: string }) => `${p.action}:${p.namespace}`;

async function createForm(catalog: object[] = CATALOG) {
  const rendered = renderScreen(signedIn(<Roles />), {
    path: '/orgs/acme/roles',
    pattern: '/orgs/:org/roles',
    answers: {
      ...acme(OWNER_HOLDS),
      'GET /authz/roles/available_permissions': [200, { permissions: catalog }],
      'POST /authz/roles': async (req) => [
        201,
        { id: 8, team_ids: [], updated_at: '2026-01-01T00:00:00Z', ...((await req.json()) as object) },
      ],
    },
  });
  return { ...rendered, form: await screen.findByRole('form', { name: 'Create role' }) };
}

/** The permissions checked in the form, as the API names them. */
const checked = (form: HTMLElement) =>
  within(form)
    .getAllByRole<HTMLInputElement>('checkbox')
    .filter((box) => box.name === 'permissions' && box.checked)
    .map((box) => box.value.split('/').reverse().join(':'))
    .sort();

describe('the custom-role form', () => {
  it('groups the catalog by what a person manages, each group with what it is about, every permission once', async () => {
    const { form } = await createForm();
    const groups = within(form)
      .getAllByRole('group')
      .filter((g) => g.tagName === 'FIELDSET' && within(g).queryAllByRole('checkbox').length > 0 && g.querySelector('fieldset') === null);
    const titles = groups.map((g) => g.querySelector('legend')?.textContent);
    expect(titles).toEqual([
      'Members',
      'Teams',
      'Roles',
      'Clusters',
      'Contracts and licenses',
      'Tokens',
      'Organization profile',
      'Assigned teams',
    ]);
    const members = within(form).getByRole('group', { name: 'Members' });
    expect(members.getAttribute('aria-describedby')).toBeTruthy();
    expect(within(members).getByText(/^Who is in the organization and its teams/)).toBeTruthy();
    // Adding and listing team members sit together, not in boxes of their own by namespace.
    expect(within(members).getByRole('checkbox', { name: /Add team members \(add:team-member\)/ })).toBeTruthy();
    expect(within(members).getByRole('checkbox', { name: /List team members \(list:team-members\)/ })).toBeTruthy();
    const offered = within(form)
      .getAllByRole<HTMLInputElement>('checkbox')
      .filter((box) => box.name === 'permissions')
      .map((box) => box.value);
    expect(offered).toHaveLength(CATALOG.length);
    expect(new Set(offered).size).toBe(CATALOG.length);
    // The groups name only permissions of the catalog.
    expect(PERMISSION_GROUPS.flatMap((g) => g.permissions).filter((p) => !CATALOG.some((c) => named(c) === p))).toEqual([]);
  });

  it('offers a permission the groups do not name under "Other permissions"', async () => {
    const { form } = await createForm([...CATALOG, { namespace: 'widget', action: 'polish', description: 'Polish widgets' }]);
    const other = within(form).getByRole('group', { name: 'Other permissions' });
    expect(within(other).getByRole('checkbox', { name: /Polish widgets \(polish:widget\)/ })).toBeTruthy();
  });

  it('starts from Viewer, Editor or Admin, each replacing what was checked, and sends what is checked', async () => {
    const { form, calls } = await createForm();
    const presets = within(form).getByRole('group', { name: 'Start from a preset' });
    fireEvent.click(within(presets).getByRole('button', { name: 'Viewer' }));
    const viewer = checked(form);
    expect(viewer).toEqual(
      [
        'list:team',
        'view:team',
        'list:team-members',
        'view:team-member',
        'view:role',
        'viewer:role',
        'view_contracts:contract_mgmt',
        'view:avatar',
      ].sort(),
    );
    fireEvent.click(within(presets).getByRole('button', { name: 'Admin' }));
    expect(checked(form)).toHaveLength(CATALOG.length);
    fireEvent.click(within(presets).getByRole('button', { name: 'Editor' }));
    const editor = checked(form);
    expect(editor).toEqual(expect.arrayContaining([...viewer, 'edit:org', 'create:cluster', 'issue-license:cluster']));
    expect(editor).not.toContain('add:team-member');
    expect(editor).not.toContain('create_role:org');
    expect(editor).not.toContain('list:access-token');

    fireEvent.change(within(form).getByLabelText(/Role name/), { target: { value: 'Editors' } });
    fireEvent.submit(form);
    expect((await within(form).findByRole('status')).textContent).toBe('Created role Editors.');
    const sent = calls.find((c) => c.call.startsWith('POST /authz/roles'))!.body as {
      permissions: { namespace: string; action: string }[];
    };
    expect(sent.permissions.map(named).sort()).toEqual(editor);
  });
});
