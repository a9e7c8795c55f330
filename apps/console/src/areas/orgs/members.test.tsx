import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { signedIn } from '../../../test/signed-in';
import { acme, MEMBER_HOLDS, OWNER_HOLDS } from './fixtures';
import { Members } from './members';

const at = { path: '/orgs/acme', pattern: '/orgs/:org' };

describe('the members of an organization', () => {
  it('lists the members the API answers, public or concealed', async () => {
    renderScreen(signedIn(<Members />), { ...at, answers: acme(OWNER_HOLDS) });
    const table = await screen.findByRole('table', { name: 'Members of acme (2)' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(
      rows.map((r) =>
        within(r)
          .getAllByRole('cell')
          .slice(0, 4)
          .map((c) => c.textContent),
      ),
    ).toEqual([
      ['olivia (you)', 'Olivia Owner', 'olivia@example.com', 'Public'],
      ['rita', 'Rita Reader', 'rita@example.com', 'Concealed'],
    ]);
    expect(await screen.findByText(/Acme Inc · Private: members only · Widgets/)).toBeTruthy();
  });

  it('offers an owner Remove, publicizing others and adding members, and removing refreshes the list', async () => {
    let members = [
      { id: 1, login: 'olivia' },
      { id: 2, login: 'rita' },
    ];
    const answers = {
      ...acme(OWNER_HOLDS),
      'GET /orgs/acme/members': () => [200, members] as [number, unknown],
      'DELETE /orgs/acme/members/rita': () => ((members = members.filter((m) => m.login !== 'rita')), [204] as [number]),
    };
    const api = renderScreen(signedIn(<Members />), { ...at, answers });
    expect(await screen.findByRole('button', { name: 'Publicize rita' })).toBeTruthy();
    expect(await screen.findByRole('form', { name: 'Add a member' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Remove rita' }));
    expect(await screen.findByRole('status')).toHaveProperty('textContent', 'Removed rita from every team of acme.');
    await screen.findByRole('table', { name: 'Members of acme (1)' });
    expect(api.calls.map((c) => c.call)).toContain('DELETE /orgs/acme/members/rita');
  });

  it('offers a read-only member no Remove, no one else to publicize, and no form to add members', async () => {
    renderScreen(signedIn(<Members />), { ...at, answers: acme(MEMBER_HOLDS) });
    await screen.findByRole('table', { name: 'Members of acme (2)' });
    // What the caller holds arrives after the list: wait until their own visibility is offered.
    await screen.findByRole('button', { name: 'Conceal olivia' });
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Publicize rita' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Add a member' })).toBeNull();
  });

  it("shows the API's message when the members cannot be read", async () => {
    renderScreen(signedIn(<Members />), {
      ...at,
      answers: { ...acme(OWNER_HOLDS), 'GET /orgs/acme/members': [503, { message: 'orgs-teams is unavailable' }] },
    });
    expect((await screen.findByRole('alert')).textContent).toBe('orgs-teams is unavailable (503)');
  });

  it('checks a username before sending, and shows what the API refused', async () => {
    const api = renderScreen(signedIn(<Members />), {
      ...at,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /users/search': [200, { ok: true, data: [] }],
        'PUT /teams/101/members/nobody': [404, { message: 'user nobody does not exist' }],
      },
    });
    const form = await screen.findByRole('form', { name: 'Add a member' });
    await waitFor(() => expect(within(form).getByRole('combobox', { name: 'Team' })).toBeTruthy());
    fireEvent.click(within(form).getByRole('button', { name: 'Add member' }));
    expect(within(form).getByRole('alert').textContent).toBe('Username is required');
    fireEvent.change(within(form).getByRole('combobox', { name: /Username/ }), { target: { value: 'nobody' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add member' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('user nobody does not exist (404)');
    expect(api.calls.filter((c) => c.call.startsWith('PUT'))).toEqual([{ call: 'PUT /teams/101/members/nobody' }]);
  });

  it('finds the user to add as the owner types, and adds the one picked', async () => {
    const SAM = { id: 5, login: 'sam', full_name: 'Samantha Smith', email: '' };
    const SAMIR = { id: 6, login: 'samir', full_name: '', email: '' };
    const api = renderScreen(signedIn(<Members />), {
      ...at,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /users/search': (req) => {
          const q = new URL(req.url).searchParams.get('q') ?? '';
          return [200, { ok: true, data: [SAM, SAMIR].filter((u) => u.login.includes(q) || u.full_name.includes(q)) }];
        },
        'PUT /teams/101/members/samir': [204],
      },
    });
    const form = await screen.findByRole('form', { name: 'Add a member' });
    const field = within(form).getByRole('combobox', { name: /Username/ });
    fireEvent.change(field, { target: { value: 'sam' } });
    const list = await within(form).findByRole('listbox', { name: 'Users matching sam' });
    expect(within(list).getAllByRole('option').map((o) => o.textContent)).toEqual(['sam Samantha Smith', 'samir']);
    expect(field.getAttribute('aria-expanded')).toBe('true');
    // The keyboard: down twice to samir, Enter picks it rather than sending the form.
    fireEvent.keyDown(field, { key: 'ArrowDown' });
    fireEvent.keyDown(field, { key: 'ArrowDown' });
    expect(within(list).getByRole('option', { name: 'samir' }).getAttribute('aria-selected')).toBe('true');
    fireEvent.keyDown(field, { key: 'Enter' });
    expect(field).toHaveProperty('value', 'samir');
    expect(field.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(within(form).getByRole('button', { name: 'Add member' }));
    expect((await within(form).findByRole('status')).textContent).toBe('Added samir to devs.');
    expect(api.calls.filter((c) => c.call.startsWith('PUT'))).toEqual([{ call: 'PUT /teams/101/members/samir' }]);
    expect(api.calls.filter((c) => c.call.startsWith('GET /users/search'))).toEqual([{ call: 'GET /users/search?q=sam&limit=8' }]);
    // Added: the field is empty for the next one.
    expect(field).toHaveProperty('value', '');
  });

  it('picks a user with the mouse, and says when nobody matches', async () => {
    renderScreen(signedIn(<Members />), {
      ...at,
      answers: {
        ...acme(OWNER_HOLDS),
        'GET /users/search': (req) => [200, { ok: true, data: new URL(req.url).searchParams.get('q') === 'rit' ? [{ id: 2, login: 'rita', full_name: 'Rita Reader' }] : [] }],
      },
    });
    const form = await screen.findByRole('form', { name: 'Add a member' });
    const field = within(form).getByRole('combobox', { name: /Username/ });
    fireEvent.change(field, { target: { value: 'zz' } });
    expect((await within(form).findByRole('status')).textContent).toBe('No user matches “zz”.');
    fireEvent.change(field, { target: { value: 'rit' } });
    fireEvent.mouseDown(await within(form).findByRole('option', { name: 'rita Rita Reader' }));
    expect(field).toHaveProperty('value', 'rita');
    expect(within(form).queryByRole('listbox')).toBeNull();
  });
});
