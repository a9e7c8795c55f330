import { fireEvent, screen } from '@testing-library/react';
import { renderScreen } from '../../../test/render';
import { AccountEmail, AccountProviderLink } from './address-and-provider';

const me = (email_verified: boolean) => [200, { id: 7, login: 'nina', email: 'nina@corp.example', email_verified }] as [number, unknown];
const methods = [200, { password: 'everyone', oidc: { name: 'Corp IdP', start_url: '/api/v1/user/oidc/start', logout_url: null } }] as [number, unknown];

describe('the account page: address and provider', () => {
  it('tells an unverified address with the way to a new mail, and sends it', async () => {
    const api = renderScreen(<AccountEmail />, { answers: { 'GET /user': me(false), 'POST /user/verification-mail': [204] } });
    expect((await screen.findByRole('alert')).textContent).toContain('not verified yet: open the link we mailed to nina@corp.example');
    fireEvent.click(screen.getByRole('button', { name: 'Send the mail again' }));
    await screen.findByText('A new link is on its way; the previous one no longer works.');
    expect(api.calls.map((c) => c.call)).toContain('POST /user/verification-mail');
  });

  it('shows a verified address without a banner', async () => {
    renderScreen(<AccountEmail />, { answers: { 'GET /user': me(true) } });
    await screen.findByText('verified');
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('offers linking the provider account through the provider, and says so when the link came back', async () => {
    renderScreen(<AccountProviderLink />, { answers: { 'GET /sign-in/methods': methods, 'GET /user/oidc/links': [200, []] } });
    const link = await screen.findByRole('link', { name: 'Link your Corp IdP account' });
    expect(link.getAttribute('href')).toBe('/api/v1/user/oidc/link/start');
  });

  it('shows the linked provider account and unlinks it', async () => {
    let links = [{ issuer: 'https://idp.corp.example', subject: 'nina-at-idp', created_at: '2026-12-01T10:00:00Z' }];
    const api = renderScreen(<AccountProviderLink />, {
      path: '/account?linked=1',
      pattern: '/account',
      answers: {
        'GET /sign-in/methods': methods,
        'GET /user/oidc/links': () => [200, links],
        'DELETE /user/oidc/links': () => ((links = []), [204]),
      },
    });
    await screen.findByText('Your Corp IdP account is linked.');
    expect(screen.getByText('nina-at-idp')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Unlink Corp IdP' }));
    fireEvent.click(screen.getByRole('button', { name: 'Confirm unlink Corp IdP' }));
    await screen.findByRole('link', { name: 'Link your Corp IdP account' });
    expect(api.calls.map((c) => c.call)).toContain(`DELETE /user/oidc/links?issuer=${encodeURIComponent('https://idp.corp.example')}`);
  });
});
