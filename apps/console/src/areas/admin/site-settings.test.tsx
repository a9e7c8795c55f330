import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen, type Answer } from '../../../test/render';
import ClientOrgs from './client-orgs';
import Settings from './settings';

const BRANDING = { appName: 'Platform', primaryColor: '#336699', logo: 'data:image/png;base64,AA==', favicon: 'data:image/png;base64,AA==' };

function settingsAnswers(more: Record<string, Answer> = {}): Record<string, Answer> {
  return {
    'GET /branding': [200, BRANDING],
    'GET /allowed-domains': [200, ['example.com']],
    'GET /disable-registration': [200, { disableRegistration: false }],
    ...more,
  };
}
const settingsAt = { path: '/admin/settings' };

describe('the site settings screen', () => {
  it('lists the whitelisted domains; adding one refreshes the list', async () => {
    let domains = ['example.com'];
    renderScreen(<Settings />, {
      ...settingsAt,
      answers: settingsAnswers({
        'GET /allowed-domains': () => [200, domains],
        'POST /allowed-domains': async (req) => {
          const { name } = (await req.json()) as { name: string };
          domains = [...domains, name];
          return [201, { name }];
        },
      }),
    });
    const table = await screen.findByRole('table', { name: 'Allowed email domains' });
    expect(within(table).getAllByRole('row')[1]!.textContent).toContain('example.com');
    const form = screen.getByRole('form', { name: 'Add to the whitelist' });
    fireEvent.change(within(form).getByRole('textbox', { name: /Domain/ }), { target: { value: 'acme.test' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add domain' }));
    expect((await within(form).findByRole('status')).textContent).toBe('Allowed acme.test.');
    expect(await within(table).findByText('acme.test')).toBeTruthy();
  });

  it('says when there is no whitelist', async () => {
    renderScreen(<Settings />, { ...settingsAt, answers: settingsAnswers({ 'GET /allowed-domains': [200, []] }) });
    expect((await screen.findByText(/^Allowed email domains:/)).textContent).toBe(
      'Allowed email domains: No whitelist: every email domain is allowed.',
    );
  });

  it('shows the API\'s refusal of the list on the "no access" page', async () => {
    renderScreen(<Settings />, {
      ...settingsAt,
      answers: settingsAnswers({ 'GET /allowed-domains': [403, { message: 'you may not edit allowed domains' }] }),
    });
    // The "no access" page, with the API's words.
    const page = await screen.findByRole('region', { name: 'You don’t have access to this' });
    expect(within(page).getByText('The platform answered: “you may not edit allowed domains”.')).toBeTruthy();
  });

  it('shows the fields the API refused on a new domain (422), under the form', async () => {
    renderScreen(<Settings />, {
      ...settingsAt,
      answers: settingsAnswers({
        'POST /allowed-domains': [422, { message: 'invalid request', errors: [{ field: 'name', description: 'is whitelisted already' }] }],
      }),
    });
    const form = await screen.findByRole('form', { name: 'Add to the whitelist' });
    fireEvent.change(within(form).getByRole('textbox', { name: /Domain/ }), { target: { value: 'example.com' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add domain' }));
    const alert = await within(form).findByRole('alert');
    expect(alert.textContent).toContain('invalid request (422)');
    expect(within(alert).getByRole('listitem').textContent).toBe('name: is whitelisted already');
  });
});

describe('the client organizations screen', () => {
  const CLIENT = {
    id: 40,
    name: 'client-a',
    username: 'client-a',
    full_name: 'Client A',
    visibility: 'private',
    managerManagementClusterEndPoint: '',
  };

  it('lists the client organizations with their status', async () => {
    renderScreen(<ClientOrgs />, {
      path: '/admin/client-orgs',
      answers: { 'GET /user/clients': [200, [CLIENT]], 'GET /user/client/client-a/status': [200, { status: 'Active' }] },
    });
    const table = await screen.findByRole('table', { name: 'Client organizations' });
    await within(table).findByText('Active');
    expect(within(table).getAllByRole('row')[1]!.textContent).toContain('Client A');
    // The status cell tells the table once it shows Active, and the table then offers the deletion: waited for.
    expect(await within(table).findByRole('button', { name: 'Delete client-a' })).toBeTruthy();
  });

  it('says when there is none', async () => {
    renderScreen(<ClientOrgs />, { path: '/admin/client-orgs', answers: { 'GET /user/clients': [200, []] } });
    expect((await screen.findByText(/^Client organizations:/)).textContent).toBe('Client organizations: No client organizations.');
  });
});
