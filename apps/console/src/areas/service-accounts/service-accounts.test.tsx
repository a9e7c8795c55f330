import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import { OWNER, signedIn } from '../../../test/signed-in';
import { AccountList } from './account-list';
import { AccountPage } from './account-page';
import { orgRoutes } from './accounts-api';

const routes = orgRoutes('acme');
const at = { path: '/orgs/acme/service-accounts', pattern: '/orgs/:org/service-accounts' };
const PIPELINE = {
  id: 40,
  name: 'pipeline',
  description: 'CI',
  roles: [7],
  site_admin: false,
  kubernetes_subjects: ['ci/deployer'],
  active: true,
  created_at: '2026-01-01T00:00:00Z',
  created_by: { id: 1, login: 'olivia' },
};
const answers = (more: Record<string, Answer> = {}): Record<string, Answer> => ({
  'GET /user': [200, OWNER],
  'GET /orgs/acme/service-accounts': [200, [PIPELINE]],
  'GET /authz/roles': [200, [{ id: 7, name: 'deployer', description: '', permissions: [], team_ids: [], updated_at: '' }]],
  ...more,
});

describe("an organization's service accounts", () => {
  it('lists each account with its roles, subjects and status', async () => {
    renderScreen(signedIn(<AccountList routes={routes} />), { ...at, answers: answers() });
    const table = await screen.findByRole('table', { name: 'Service accounts of acme (1)' });
    const cells = within(within(table).getAllByRole('row')[1])
      .getAllByRole('cell')
      .map((c) => c.textContent);
    expect(cells.slice(0, 5)).toEqual(['pipeline', 'CI', 'deployer', 'ci/deployer ', 'Active']);
  });

  it('says when there are none', async () => {
    renderScreen(signedIn(<AccountList routes={routes} />), { ...at, answers: answers({ 'GET /orgs/acme/service-accounts': [200, []] }) });
    expect((await screen.findByText(/Service accounts of acme \(0\)/)).textContent).toBe(
      'Service accounts of acme (0): none yet; create one below.',
    );
  });

  it('shows one who is not an owner the "no access" page, with the API\'s words', async () => {
    renderScreen(signedIn(<AccountList routes={routes} />), {
      ...at,
      answers: answers({ 'GET /orgs/acme/service-accounts': [403, { message: 'org ownership required' }] }),
    });
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “org ownership required”.')).toBeTruthy();
    expect(screen.queryByRole('form')).toBeNull();
  });

  it('shows each field the API refused on a new account (422), and a created one joins the list', async () => {
    let accounts = [PIPELINE];
    const api = renderScreen(signedIn(<AccountList routes={routes} />), {
      ...at,
      answers: answers({
        'GET /orgs/acme/service-accounts': () => [200, accounts],
        'POST /orgs/acme/service-accounts': async (req) => {
          const body = (await req.json()) as { name: string };
          if (body.name === 'pipeline') return [422, { message: 'invalid request', errors: [{ field: 'name', description: 'is taken' }] }];
          accounts = [...accounts, { ...PIPELINE, id: 41, name: body.name }];
          return [201, accounts[1]];
        },
      }),
    });
    const form = await screen.findByRole('form', { name: 'Create service account' });
    const name = within(form).getByRole('textbox', { name: /^Name/ });
    fireEvent.change(name, { target: { value: 'pipeline' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create service account' }));
    const alert = await within(form).findByRole('alert');
    expect(within(alert).getByRole('listitem').textContent).toBe('name: is taken');
    fireEvent.change(name, { target: { value: 'backup' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create service account' }));
    await screen.findByRole('table', { name: 'Service accounts of acme (2)' });
    expect(api.calls.filter((c) => c.call === 'POST /orgs/acme/service-accounts')).toHaveLength(2);
  });

  it("revoking a token on an account's page takes it off the list", async () => {
    let tokens = [{ id: 3, name: 'ci', token_last_eight: '12345678', created_at: '2026-01-01T00:00:00Z', last_used_at: '0001-01-01T00:00:00Z' }];
    renderScreen(signedIn(<AccountPage routes={routes} id={40} />), {
      path: '/orgs/acme/service-accounts/40',
      answers: answers({
        'GET /orgs/acme/service-accounts/40': [200, PIPELINE],
        'GET /orgs/acme/service-accounts/40/tokens': () => [200, tokens],
        'DELETE /orgs/acme/service-accounts/40/tokens/3': () => ((tokens = []), [204]),
      }),
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Revoke ci' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm revoke ci' }));
    expect((await screen.findByText(/Tokens of pipeline: none yet/)).textContent).toBe('Tokens of pipeline: none yet; create one below.');
  });
});
