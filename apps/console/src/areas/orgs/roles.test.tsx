import { screen, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from './fixtures';
import { RolePage } from './role';
import { Roles } from './roles';

const rolesAt = { path: '/orgs/acme/roles', pattern: '/orgs/:org/roles' };

describe('the custom roles of an organization', () => {
  it('lists each role with its permissions, teams and who holds it, and offers an owner to delete and create', async () => {
    renderScreen(signedIn(<Roles />), { ...rolesAt, answers: acme(OWNER_HOLDS) });
    const table = await screen.findByRole('table', { name: 'Custom roles of acme (1)' });
    await within(table).findByText('rita');
    const cells = within(within(table).getAllByRole('row')[1])
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells.slice(0, 5)).toEqual(['auditor', 'Reads contracts', 'view_contracts:contract_mgmt', 'devs', 'rita']);
    expect(await screen.findByRole('button', { name: 'Delete role auditor' })).toBeTruthy();
    expect(screen.getByRole('form', { name: 'Create role' })).toBeTruthy();
  });

  it('names each permission of the catalog by its description and name', async () => {
    renderScreen(signedIn(<Roles />), {
      ...rolesAt,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /authz/roles/available_permissions': [
          200,
          { permissions: [{ namespace: 'cluster', action: 'create', description: 'Enroll hub clusters of the organization' }] },
        ],
      },
    });
    const form = await screen.findByRole('form', { name: 'Create role' });
    expect(within(form).getByRole('checkbox', { name: /Enroll hub clusters of the organization/ }).parentElement?.textContent).toBe(
      'Enroll hub clusters of the organization (create:cluster)',
    );
  });

  it('offers a read-only member neither Delete nor a form to create one', async () => {
    renderScreen(signedIn(<Roles />), { ...rolesAt, answers: acme(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Custom roles of acme (1)' });
    expect(screen.queryByRole('button', { name: /^Delete role/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Create role' })).toBeNull();
  });

  it('says when there are none', async () => {
    renderScreen(signedIn(<Roles />), { ...rolesAt, answers: { ...acme(OWNER_HOLDS), 'GET /authz/roles': [200, []] } });
    expect((await screen.findByText(/Custom roles of acme \(0\)/)).textContent).toBe('Custom roles of acme (0): None yet.');
  });

  it("shows a role's holders to a member, without editing or deleting it", async () => {
    renderScreen(signedIn(<RolePage />), { path: '/orgs/acme/roles/7', pattern: '/orgs/:org/roles/:id', answers: acme(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Principals of role auditor' });
    expect(screen.queryByRole('form', { name: 'Edit role auditor' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete role auditor' })).toBeNull();
  });

  it('keeps the role’s page for one refused its holders, saying in a line that they may not see who holds it', async () => {
    renderScreen(signedIn(<RolePage />), {
      path: '/orgs/acme/roles/7',
      pattern: '/orgs/:org/roles/:id',
      answers: { ...acme(MEMBER_HOLDS), 'GET /authz/roles/7/principals': [403, { message: 'missing relation viewer on role 7' }] },
    });
    expect((await screen.findByText(/^You don’t have access to who holds auditor\./)).textContent).toBe(
      'You don’t have access to who holds auditor. The platform answered: “missing relation viewer on role 7”.',
    );
    expect(screen.getByRole('navigation', { name: 'Organization acme' })).toBeTruthy();
  });
});
