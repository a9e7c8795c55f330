import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderScreen, type StubbedApi } from '../../../test/render';
import type { User } from './admin-users-api';
import { UserAdmin } from './users';

const user = (login: string, more: Partial<User> = {}): User => ({
  id: login.length * 7 + login.charCodeAt(0),
  login,
  username: login,
  full_name: '',
  email: `${login}@example.com`,
  avatar_url: '',
  language: '',
  is_admin: false,
  last_login: '0001-01-01T00:00:00Z',
  created: '2026-01-02T03:04:05Z',
  type: 0,
  active: true,
  prohibit_login: false,
  location: '',
  website: '',
  description: '',
  orgAdmin: false,
  clientOrgUser: false,
  login_name: '',
  source_id: 0,
  visibility: 'public',
  restricted: false,
  followers_count: 0,
  following_count: 0,
  starred_repos_count: 0,
  ...more,
});

const root = user('root', { is_admin: true });
const alice = user('alice', { full_name: 'Alice A', sign_in_locked_until: '2030-01-01T00:00:00Z' });
const bob = user('bob');

/** The query of each list request the screen made, in order. */
const listQueries = (api: StubbedApi) =>
  api.calls
    .filter((c) => c.call.startsWith('GET /admin/users'))
    .map((c) => Object.fromEntries(new URL(c.call.slice(4), 'http://x').searchParams));

function renderUsers(answers: Parameters<typeof renderScreen>[1]['answers'] = {}, path = '/admin/users') {
  return renderScreen(<UserAdmin self="root" />, {
    path,
    pattern: '/admin/users',
    answers: { 'GET /admin/users': [200, [root, alice, bob], { 'X-Total-Count': '3' }], ...answers },
  });
}

describe('the users screen', () => {
  it('lists the users with their rights and status', async () => {
    renderUsers();
    const table = await screen.findByRole('table', { name: 'Users (3)' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent)).toEqual(['root', 'aliceAlice A', 'bob']);
    expect(within(rows[0]).getByText('site admin')).toBeTruthy();
    expect(within(rows[1]).getByText(/^locked until/)).toBeTruthy();
  });

  it('asks the API for the next page and for a search, from the first page', async () => {
    const api = renderUsers({ 'GET /admin/users': [200, [root, alice, bob], { 'X-Total-Count': '45' }] });
    await screen.findByRole('table', { name: 'Users (45)' });
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await screen.findByText('Page 2 of 3 (45)');
    fireEvent.change(screen.getByRole('searchbox', { name: 'Login or email' }), { target: { value: 'alice@example' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    await screen.findByRole('table', { name: 'Users matching “alice@example” (45)' });
    expect(listQueries(api)).toEqual([
      { page: '1', limit: '20' },
      { page: '2', limit: '20' },
      { page: '1', limit: '20', q: 'alice@example' },
    ]);
  });

  it('goes back to the last page that exists when the page asked for has no rows left', async () => {
    const api = renderUsers(
      {
        'GET /admin/users': (req) =>
          new URL(req.url).searchParams.get('page') === '3'
            ? [200, [], { 'X-Total-Count': '40' }]
            : [200, [root, alice], { 'X-Total-Count': '40' }],
      },
      '/admin/users?page=3',
    );
    await screen.findByText('Page 2 of 2 (40)');
    expect(listQueries(api).map((q) => q.page)).toEqual(['3', '2']);
  });

  it('offers lifting a lockout only for a locked user, and lifts it', async () => {
    const api = renderUsers({ 'DELETE /admin/users/alice/lockout': [204] });
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: 'Lift lockout of bob' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Lift lockout of root' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Lift lockout of alice' }));
    await screen.findByText('Lifted the sign-in lockout of alice.');
    expect(api.calls.map((c) => c.call)).toContain('DELETE /admin/users/alice/lockout');
    // The list is asked again, so the lockout disappears from it.
    await waitFor(() => expect(listQueries(api)).toHaveLength(2));
  });

  it('shows whose address is verified, and mails a new link only to an unverified one', async () => {
    const carol = user('carol', { email_verified: false });
    const api = renderUsers({
      'GET /admin/users': [200, [root, { ...bob, email_verified: true }, carol], { 'X-Total-Count': '3' }],
      'POST /admin/users/carol/verification-mail': [204],
    });
    const table = await screen.findByRole('table', { name: 'Users (3)' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(within(rows[1]).getByText('verified')).toBeTruthy();
    expect(within(rows[2]).getByText('not verified')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Resend verification mail to bob' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Resend verification mail to carol' }));
    await screen.findByText('Mailed carol a new link verifying carol@example.com.');
    expect(api.calls.map((c) => c.call)).toContain('POST /admin/users/carol/verification-mail');
  });

  it('sends only the changed fields of an edit', async () => {
    const api = renderUsers({ 'PATCH /admin/users/bob': [200, bob] });
    await screen.findByRole('table');
    fireEvent.click(screen.getByRole('button', { name: 'Edit bob' }));
    const form = screen.getByRole('form', { name: 'Edit user bob' });
    // Untouched, nothing is sent.
    fireEvent.click(within(form).getByRole('button', { name: 'Save user' }));
    within(form).getByText('Nothing to save: no field differs from the user.');
    fireEvent.change(within(form).getByLabelText('Email'), { target: { value: 'robert@example.com' } });
    fireEvent.change(within(form).getByLabelText('New password'), { target: { value: 'a-new-secret' } });
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Active' }));
    fireEvent.click(within(form).getByRole('checkbox', { name: 'Prohibit sign-in' }));
    fireEvent.change(within(form).getByRole('combobox', { name: 'Allow creating organizations' }), { target: { value: 'no' } });
    fireEvent.change(within(form).getByRole('combobox', { name: 'Must change password' }), { target: { value: 'yes' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save user' }));
    await within(form).findByText('Saved user bob.');
    expect(api.calls.filter((c) => c.call.startsWith('PATCH'))).toEqual([
      {
        call: 'PATCH /admin/users/bob',
        body: {
          email: 'robert@example.com',
          password: 'a-new-secret',
          active: false,
          prohibit_login: true,
          must_change_password: true,
          allow_create_organization: false,
        },
      },
    ]);
    // The password is not kept in the form once saved.
    expect((within(form).getByLabelText('New password') as HTMLInputElement).value).toBe('');
  });

  it('shows the API’s field errors beside the fields', async () => {
    renderUsers({
      'POST /admin/users': [
        422,
        {
          message: 'full_name: at most 100 characters',
          url: '',
          errors: [{ field: 'body.full_name', description: 'at most 100 characters' }],
        },
      ],
    });
    const form = screen.getByRole('form', { name: 'New user' });
    fireEvent.change(within(form).getByLabelText(/^Username/), { target: { value: 'carol' } });
    fireEvent.change(within(form).getByLabelText(/^Email/), { target: { value: 'carol@example.com' } });
    fireEvent.change(within(form).getByLabelText(/^Password/), { target: { value: 'long enough' } });
    fireEvent.change(within(form).getByLabelText('Full name'), { target: { value: 'C'.repeat(101) } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create user' }));
    const fullName = within(form).getByLabelText('Full name');
    await waitFor(() => expect(fullName.getAttribute('aria-invalid')).toBe('true'));
    expect(document.getElementById(fullName.getAttribute('aria-describedby')!)?.textContent).toBe('at most 100 characters');
    expect(
      within(form)
        .getByLabelText(/^Email/)
        .getAttribute('aria-invalid'),
    ).toBeNull();
  });

  it('checks a new user before sending it, and sends the must-change-password choice', async () => {
    const api = renderUsers({ 'POST /admin/users': [201, user('dave')] });
    const form = screen.getByRole('form', { name: 'New user' });
    fireEvent.change(within(form).getByLabelText(/^Username/), { target: { value: 'dave' } });
    fireEvent.change(within(form).getByLabelText(/^Email/), { target: { value: 'dave@example.com' } });
    fireEvent.change(within(form).getByLabelText(/^Password/), { target: { value: 'short' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create user' }));
    expect(
      within(form)
        .getByLabelText(/^Password/)
        .getAttribute('aria-invalid'),
    ).toBe('true');
    fireEvent.change(within(form).getByLabelText(/^Password/), { target: { value: 'long enough' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create user' }));
    await within(form).findByText('Created user dave.');
    expect(api.calls.filter((c) => c.call.startsWith('POST'))).toEqual([
      {
        call: 'POST /admin/users',
        body: { username: 'dave', email: 'dave@example.com', password: 'long enough', must_change_password: true },
      },
    ]);
  });

  it('never offers deleting or demoting oneself', async () => {
    renderUsers();
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: 'Delete root' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Delete bob' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Edit root' }));
    const form = screen.getByRole('form', { name: 'Edit user root' });
    for (const flag of ['Site admin', 'Active', 'Prohibit sign-in'])
      expect((within(form).getByRole('checkbox', { name: flag }) as HTMLInputElement).disabled).toBe(true);
  });

  it('offers deleting the organizations a user alone owns when the API refuses the deletion for them', async () => {
    const api = renderUsers({
      'DELETE /admin/users/bob': (req) =>
        new URL(req.url).searchParams.get('purge') === 'true'
          ? [204]
          : [
              422,
              {
                message:
                  'user bob is the last owner of acme, beta: give each another owner or delete it first, or delete the user with purge',
                url: '',
              },
            ],
    });
    await screen.findByRole('table');
    fireEvent.click(screen.getByRole('button', { name: 'Delete bob' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm delete bob' }));
    const refusal = await screen.findByRole('alert');
    expect(refusal.textContent).toContain('bob is the last owner of acme, beta.');
    fireEvent.click(within(refusal).getByRole('button', { name: 'Also delete acme, beta' }));
    fireEvent.click(within(refusal).getByRole('button', { name: 'Confirm delete bob and acme, beta' }));
    await screen.findByText('Deleted user bob and the organizations they alone owned.');
    expect(api.calls.filter((c) => c.call.startsWith('DELETE')).map((c) => c.call)).toEqual([
      'DELETE /admin/users/bob',
      'DELETE /admin/users/bob?purge=true',
    ]);
  });

  it('offers no purge when the refusal is about something else', async () => {
    renderUsers({
      'DELETE /admin/users/bob': [
        422,
        { message: 'user bob is the last owner of the administrative organization platform-admin, which is never deleted', url: '' },
      ],
    });
    await screen.findByRole('table');
    fireEvent.click(screen.getByRole('button', { name: 'Delete bob' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm delete bob' }));
    const refusal = await screen.findByRole('alert');
    expect(refusal.textContent).toBe(
      'user bob is the last owner of the administrative organization platform-admin, which is never deleted (422)',
    );
    expect(screen.queryByRole('button', { name: /^Also delete/ })).toBeNull();
  });

  it("revokes every token and session of a user, and resets a user's second factor, each after a confirmation", async () => {
    const api = renderUsers({
      'DELETE /admin/users/bob/credentials': [200, { tokens: 3, sessions: 2 }],
      'DELETE /admin/users/bob/two-factor': [204],
    });
    const table = await screen.findByRole('table', { name: 'Users (3)' });
    const row = within(table).getAllByRole('row')[3];
    fireEvent.click(within(row).getByRole('button', { name: 'Revoke tokens and sessions of bob' }));
    expect(api.calls.some((c) => c.call.startsWith('DELETE'))).toBe(false);
    fireEvent.click(within(row).getByRole('button', { name: 'Confirm revoke all of bob' }));
    await screen.findByText('Revoked 3 access tokens and 2 sessions of bob.');
    fireEvent.click(within(row).getByRole('button', { name: 'Reset two-factor of bob' }));
    fireEvent.click(within(row).getByRole('button', { name: 'Confirm reset two-factor of bob' }));
    await screen.findByText('Reset the two-factor authentication of bob.');
    expect(api.calls.filter((c) => c.call.startsWith('DELETE')).map((c) => c.call)).toEqual([
      'DELETE /admin/users/bob/credentials',
      'DELETE /admin/users/bob/two-factor',
    ]);
  });
});
