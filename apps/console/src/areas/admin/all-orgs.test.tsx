import { fireEvent, screen, within } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import type { Organization } from './admin-users-api';
import AllOrgs from './all-orgs';

const org = (id: number, name: string, visibility: Organization['visibility']): Organization => ({
  id,
  name,
  username: name,
  full_name: `${name} Ltd`,
  email: '',
  avatar_url: '',
  description: '',
  website: '',
  location: '',
  managerManagementClusterEndPoint: '',
  visibility,
  orgType: 0,
});

describe('all organizations', () => {
  it('lists every organization, private ones too, each linked to its page, and pages through the API', async () => {
    const api = renderScreen(<AllOrgs />, {
      path: '/admin/orgs',
      answers: { 'GET /admin/orgs': [200, [org(1, 'acme', 'public'), org(2, 'hidden', 'private')], { 'X-Total-Count': '22' }] },
    });
    const table = await screen.findByRole('table', { name: 'All organizations (22)' });
    expect(within(table).getByRole('link', { name: 'hidden' }).getAttribute('href')).toBe('/orgs/hidden');
    expect(within(table).getByRole('cell', { name: 'private' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await screen.findByText('Page 2 of 2 (22)');
    expect(api.calls.map((c) => c.call)).toEqual(['GET /admin/orgs?page=1&limit=20', 'GET /admin/orgs?page=2&limit=20']);
  });

  it('shows the API’s refusal', async () => {
    renderScreen(<AllOrgs />, { path: '/admin/orgs', answers: { 'GET /admin/orgs': [403, { message: 'site admin required', url: '' }] } });
    expect((await screen.findByRole('alert')).textContent).toBe('site admin required (403)');
  });
});
