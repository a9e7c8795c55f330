import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { Access, pathText } from './access';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from './fixtures';

const accessAt = { path: '/orgs/acme/access', pattern: '/orgs/:org/access' };

const ORG_ACCESS = {
  object: 'organization:10',
  permissions: [
    {
      permission: 'edit:org',
      description: 'Edit the organization',
      relation: 'edit',
      users: [
        { id: 1, login: 'olivia', paths: [{ kind: 'owner', team_id: 100, team_name: 'Owners' }] },
        {
          id: 2,
          login: 'rita',
          paths: [{ kind: 'role', role_id: 7, role_name: 'auditor', team_id: 101, team_name: 'devs', until: '2027-01-01T00:00:00Z' }],
        },
        { id: 9, login: 'root', paths: [{ kind: 'site_admin' }] },
      ],
    },
    {
      permission: 'view:team',
      description: 'View teams',
      relation: 'view_team',
      users: [{ id: 3, login: 'mo', paths: [{ kind: 'relation', relation: 'member' }] }],
    },
    { permission: 'delete:org', description: 'Delete the organization', relation: 'delete', users: [] },
  ],
};

/** The contracts and clusters of acme, by name: one contract, a hub and the cluster it manages. */
const OBJECTS: Record<string, Answer> = {
  'GET /user/contracts': [200, [{ id: 9, name: 'Enterprise', product: 'productdb' }]],
  'GET /orgs/acme/clusters': [200, [{ uid: 'a0000000-0000-4000-8000-000000000001', name: 'hub1' }]],
  'GET /clusters/acme/hub1/available-clusters': [200, [{ uid: 'b0000000-0000-4000-8000-000000000002', name: 'edge1' }]],
};

describe('who has access', () => {
  it("shows an owner each permission's holders and how they hold it, named as the catalog names them, time-bound roles with their end", async () => {
    const { calls } = renderScreen(signedIn(<Access />), {
      ...accessAt,
      answers: { ...acme(OWNER_HOLDS), ...OBJECTS, 'GET /authz/objects/organization/10/access': [200, ORG_ACCESS] },
    });
    expect(await screen.findByRole('heading', { name: 'Who has access to the organization acme' })).toBeTruthy();
    const table = screen.getByRole('table', { name: 'Permissions on the organization acme (2)' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent)).toEqual([
      'Edit the organization edit:org',
      'View teams view:team',
    ]);
    expect(screen.queryByText(/organization:10/)).toBeNull();
    const edit = within(rows[0])
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    expect(edit[0]).toBe('olivia: owner through team Owners');
    expect(edit[1]).toMatch(/^rita: role auditor through team devs, until /);
    expect(edit[2]).toBe('root: site admin');
    expect(within(rows[1]).getByRole('listitem').textContent).toBe('mo: member');
    expect(calls.map((c) => c.call)).toContain('GET /authz/objects/organization/10/access?org=acme');
  });

  it('offers the contracts and clusters of the organization by name, and names the one shown; a refusal as the API words it', async () => {
    const { calls } = renderScreen(signedIn(<Access />), {
      ...accessAt,
      answers: {
        ...acme(OWNER_HOLDS),
        ...OBJECTS,
        'GET /authz/objects/organization/10/access': [200, ORG_ACCESS],
        'GET /authz/objects/cluster/b0000000-0000-4000-8000-000000000002/access': [200, { ...ORG_ACCESS, object: 'cluster:b0000000' }],
        'GET /authz/objects/contract/9/access': [200, { ...ORG_ACCESS, object: 'contract:9' }],
        'GET /authz/objects/cluster/a0000000-0000-4000-8000-000000000001/access': [
          404,
          { message: 'cluster a0000000-0000-4000-8000-000000000001 not found in this organization' },
        ],
      },
    });
    await screen.findByRole('table', { name: 'Permissions on the organization acme (2)' });
    const form = screen.getByRole('form', { name: 'Show access to' });
    const picker = within(form).getByLabelText('Object');
    await within(picker).findByRole('option', { name: 'Cluster edge1, managed by hub1' });
    expect(
      within(picker)
        .getAllByRole('option')
        .map((o) => o.textContent),
    ).toEqual(['The organization acme', 'Contract Enterprise (productdb)', 'Cluster hub1 (hub)', 'Cluster edge1, managed by hub1']);
    fireEvent.change(picker, { target: { value: 'cluster:b0000000-0000-4000-8000-000000000002' } });
    fireEvent.submit(form);
    expect(await screen.findByRole('table', { name: 'Permissions on cluster edge1, managed by hub1 (2)' })).toBeTruthy();
    // The picker names what is shown.
    expect((within(form).getByLabelText('Object') as HTMLSelectElement).value).toBe('cluster:b0000000-0000-4000-8000-000000000002');

    fireEvent.change(within(form).getByLabelText('Object'), { target: { value: 'contract:9' } });
    fireEvent.submit(form);
    expect(await screen.findByRole('table', { name: 'Permissions on contract Enterprise (productdb) (2)' })).toBeTruthy();
    expect(calls.map((c) => c.call)).toContain('GET /authz/objects/contract/9/access?org=acme');

    fireEvent.change(within(form).getByLabelText('Object'), { target: { value: 'cluster:a0000000-0000-4000-8000-000000000001' } });
    fireEvent.submit(form);
    expect(await screen.findByText(/cluster a0000000-0000-4000-8000-000000000001 not found in this organization/)).toBeTruthy();
  });

  it('shows a member who is not an owner the "no access" page, and asks nothing', async () => {
    const { calls } = renderScreen(signedIn(<Access />), { ...accessAt, answers: acme(MEMBER_HOLDS) });
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText(/^This screen is for the owners of acme and site admins\./)).toBeTruthy();
    expect(calls.some((c) => c.call.includes('/access'))).toBe(false);
  });

  it('words every kind of path', () => {
    expect(pathText({ kind: 'owner' })).toBe('owner');
    expect(pathText({ kind: 'role', role_id: 4 })).toBe('role #4');
    expect(pathText({ kind: 'relation', relation: 'member', team_id: 5 })).toBe('member through team #5');
  });
});
