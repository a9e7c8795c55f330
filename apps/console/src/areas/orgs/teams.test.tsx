import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, DEVS, MEMBER_HOLDS, OWNER_HOLDS, OWNERS_TEAM } from './fixtures';
import { TeamPage } from './team';
import { Teams } from './teams';

const teamsAt = { path: '/orgs/acme/teams', pattern: '/orgs/:org/teams' };
const devsAt = { path: '/orgs/acme/teams/101', pattern: '/orgs/:org/teams/:teamid' };
const rowsOf = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) =>
      within(r)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    );

describe('the teams of an organization', () => {
  it('lists each team with its permission, custom roles and member count', async () => {
    renderScreen(signedIn(<Teams />), { ...teamsAt, answers: acme(OWNER_HOLDS) });
    const table = await screen.findByRole('table', { name: 'Teams of acme (2)' });
    await within(table).findAllByText('1');
    expect(rowsOf(table)).toEqual([
      ['Owners', '—', 'owner', 'general', '—', '1'],
      ['devs', 'Developers', 'read', 'general', 'auditor', '1'],
    ]);
  });

  it('says when there are no teams', async () => {
    renderScreen(signedIn(<Teams />), { ...teamsAt, answers: { ...acme(OWNER_HOLDS), 'GET /orgs/acme/teams': [200, []] } });
    expect((await screen.findByText(/Teams of acme \(0\)/)).textContent).toBe('Teams of acme (0): None yet.');
  });

  it('shows each field the API refused on a new team (422), under the form', async () => {
    const answers = {
      ...acme(OWNER_HOLDS),
      'POST /orgs/acme/teams': [
        422,
        { message: 'invalid request', errors: [{ field: 'name', description: 'a team named devs exists already' }] },
      ] as [number, unknown],
    };
    renderScreen(signedIn(<Teams />), { ...teamsAt, answers });
    const form = await screen.findByRole('form', { name: 'Create team' });
    fireEvent.change(within(form).getByRole('textbox', { name: /Team name/ }), { target: { value: 'devs' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create team' }));
    const alert = await within(form).findByRole('alert');
    expect(alert.textContent).toContain('invalid request (422)');
    expect(within(alert).getByRole('listitem').textContent).toBe('name: a team named devs exists already');
  });

  it('offers a read-only member no form to create a team', async () => {
    renderScreen(signedIn(<Teams />), { ...teamsAt, answers: acme(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Teams of acme (2)' });
    expect(screen.queryByRole('form', { name: 'Create team' })).toBeNull();
  });
});

describe('a team', () => {
  it('offers whoever may change it Remove, adding, editing and deleting; removing refreshes its members', async () => {
    let members = [{ id: 2, login: 'rita' }];
    const api = renderScreen(signedIn(<TeamPage />), {
      ...devsAt,
      answers: {
        ...acme(['view', 'edit', 'delete', 'add_member', 'remove_member']),
        'GET /teams/101/members': () => [200, members],
        'DELETE /teams/101/members/rita': () => ((members = []), [204]),
      },
    });
    await screen.findByRole('form', { name: 'Edit team devs' });
    expect(screen.getByRole('form', { name: 'Add a member to devs' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Delete team devs' })).toBeTruthy();
    fireEvent.click(await screen.findByRole('button', { name: 'Remove rita' }));
    expect((await screen.findByText(/Members of team devs \(0\)/)).textContent).toBe('Members of team devs (0): None yet.');
    expect(api.calls.map((c) => c.call)).toContain('DELETE /teams/101/members/rita');
  });

  it('offers a read-only member its members without Remove, and no edit, add or delete', async () => {
    renderScreen(signedIn(<TeamPage />), { ...devsAt, answers: acme(['view', 'list_members', ...MEMBER_HOLDS]) });
    await screen.findByRole('table', { name: 'Members of team devs (1)' });
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Edit team devs' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Add a member to devs' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete team devs' })).toBeNull();
  });

  it('leaves the owner team to those who may manage owners', async () => {
    const answers = {
      ...acme(['view', 'edit', 'add_member', 'remove_member', 'member', 'access']),
      'GET /teams/100': [200, OWNERS_TEAM] as [number, unknown],
      'GET /authz/objects/team/100/allowed-permissions': [
        200,
        { objectType: 'team', objectID: 100, allowedPermissions: ['view', 'edit', 'add_member', 'remove_member'] },
      ] as [number, unknown],
    };
    renderScreen(signedIn(<TeamPage />), { path: '/orgs/acme/teams/100', pattern: '/orgs/:org/teams/:teamid', answers });
    await screen.findByRole('table', { name: 'Members of team Owners (1)' });
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Edit team Owners' })).toBeNull();
  });

  it('shows when a time-bound role ends, and lets an owner keep, move, refuse a past or clear that end', async () => {
    const end = '2099-03-01T12:00:00Z';
    const devs = { ...DEVS, role_until: { 7: end } };
    const api = renderScreen(signedIn(<TeamPage />), {
      ...devsAt,
      answers: {
        ...acme(['view', 'edit', 'delete', 'add_member', 'remove_member']),
        'GET /teams/101': [200, devs],
        'PATCH /teams/101': [200, devs],
      },
    });
    expect((await screen.findByText(/^auditor \(until/)).textContent).toBe('auditor (until 2099-03-01 12:00 UTC)');
    const form = await screen.findByRole('form', { name: 'Edit team devs' });
    const date = within(form).getByLabelText('auditor until') as HTMLInputElement;
    expect(date.value).toBe('2099-03-01');
    const patches = () =>
      api.calls.filter((c) => c.call === 'PATCH /teams/101').map((c) => (c.body as { assignedRoleUntil: unknown }).assignedRoleUntil);
    const save = async (sent: number) => {
      fireEvent.click(within(form).getByRole('button', { name: 'Save team' }));
      await waitFor(() => expect(patches()).toHaveLength(sent));
    };

    // Saved unchanged, the end keeps its hour; a new date ends the role as that day begins (UTC).
    await save(1);
    fireEvent.change(date, { target: { value: '2099-04-02' } });
    await save(2);
    fireEvent.change(date, { target: { value: '' } });
    await save(3);
    expect(patches()).toEqual([{ 7: end }, { 7: '2099-04-02T00:00:00Z' }, {}]);

    // A past date is refused before anything is sent.
    fireEvent.change(date, { target: { value: '2001-01-01' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save team' }));
    expect(await within(form).findByText('The end of auditor has passed: pick a later date or clear it.')).toBeTruthy();
    expect(patches()).toHaveLength(3);
  });

  it("says so when the team is another organization's", async () => {
    renderScreen(signedIn(<TeamPage />), {
      ...devsAt,
      answers: { ...acme(OWNER_HOLDS), 'GET /teams/101': [200, { ...DEVS, organization: { username: 'other' } }] },
    });
    expect((await screen.findByRole('alert')).textContent).toBe('Team devs belongs to other, not acme.');
  });
});
