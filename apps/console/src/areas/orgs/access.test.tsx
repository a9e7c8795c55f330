import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { Access, pathText } from './access';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from './fixtures';

const accessAt = { path: '/orgs/acme/access', pattern: '/orgs/:org/access' };

const ORG_ACCESS = {
  object: 'organization:10',
  permissions: [
    {
      permission: 'edit:org',
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
    { permission: 'view_team', relation: 'view_team', users: [{ id: 3, login: 'mo', paths: [{ kind: 'relation', relation: 'member' }] }] },
    { permission: 'delete:org', relation: 'delete', users: [] },
  ],
};

describe('who has access', () => {
  it("shows an owner each permission's holders and how they hold it, time-bound roles with their end", async () => {
    const { calls } = renderScreen(signedIn(<Access />), {
      ...accessAt,
      answers: { ...acme(OWNER_HOLDS), 'GET /authz/objects/organization/10/access': [200, ORG_ACCESS] },
    });
    const table = await screen.findByRole('table', { name: 'Permissions on organization:10 (2)' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent)).toEqual(['edit:org', 'view_team']);
    const edit = within(rows[0])
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    expect(edit[0]).toBe('olivia: owner through team Owners');
    expect(edit[1]).toMatch(/^rita: role auditor through team devs, until /);
    expect(edit[2]).toBe('root: site admin');
    expect(within(rows[1]).getByRole('listitem').textContent).toBe('mo: member');
    expect(calls.map((c) => c.call)).toContain('GET /authz/objects/organization/10/access?org=acme');
  });

  it('asks about a contract of the organization when one is picked, and shows a refusal as the API words it', async () => {
    const { calls } = renderScreen(signedIn(<Access />), {
      ...accessAt,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /authz/objects/organization/10/access': [200, ORG_ACCESS],
        'GET /authz/objects/contract/c-9/access': [404, { message: 'contract c-9 not found in this organization' }],
      },
    });
    await screen.findByRole('table', { name: 'Permissions on organization:10 (2)' });
    const form = screen.getByRole('form', { name: 'Show access to' });
    fireEvent.change(within(form).getByLabelText('Object'), { target: { value: 'contract' } });
    fireEvent.submit(form);
    expect((await within(form).findByRole('alert')).textContent).toBe('Give the id of the contract or cluster.');
    fireEvent.change(within(form).getByLabelText('Contract or cluster id'), { target: { value: 'c-9' } });
    fireEvent.submit(form);
    expect(await screen.findByText(/contract c-9 not found in this organization/)).toBeTruthy();
    expect(calls.map((c) => c.call)).toContain('GET /authz/objects/contract/c-9/access?org=acme');
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
