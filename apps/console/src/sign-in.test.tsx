import { fireEvent, screen, waitFor } from '@testing-library/react';
import { renderScreen } from '../test/render';
import { SessionProvider, useSession } from './session';
import { SignIn } from './sign-in';

const USER = { id: 9, login: 'omar', full_name: '', email: 'omar@corp.example', is_admin: false };
const branding = [200, { appName: 'Platform', logo: '', favicons: {}, primaryColor: '#000000', showAppTag: false }] as [number, unknown];

describe('the sign-in screen', () => {
  beforeEach(() => sessionStorage.clear());

  it('offers no sign-up while registration is disabled', async () => {
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      { answers: { 'GET /branding': branding, 'GET /disable-registration': [200, { disableRegistration: true }] } },
    );
    await waitFor(() => expect(calls.some((c) => c.call === 'GET /disable-registration')).toBe(true));
    await screen.findByRole('form', { name: 'Sign in with password' });
    expect(screen.queryByRole('button', { name: 'Create an account' })).toBeNull();
  });

  it('signs up while registration is enabled, into a session', async () => {
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: false }],
          'POST /user/signup': [201, { user: USER, session: { id: 1, current: true }, csrf_token: 'c' }],
        },
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Create an account' }));
    const form = screen.getByRole('form', { name: 'Create an account' });
    fireEvent.change(screen.getByLabelText(/^Username/), { target: { value: 'omar' } });
    fireEvent.change(screen.getByLabelText(/^Email/), { target: { value: 'omar@corp.example' } });
    fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'omar-password' } });
    fireEvent.change(screen.getByLabelText(/^Repeat the password/), { target: { value: 'omar-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create account' }));
    await waitFor(() => expect(calls.find((c) => c.call === 'POST /user/signup')?.body).toEqual({ username: 'omar', email: 'omar@corp.example', password: 'omar-password' }));
    expect(form).toBeTruthy();
  });

  it('tells a sign-up to verify its address when the site lets it in only then, and offers a new mail on a refused sign-in', async () => {
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: false }],
          'POST /user/signup': [201, { user: USER, session: null, csrf_token: null }],
          'POST /user/session': [403, { message: 'your e-mail address omar@corp.example is not verified yet: open the link mailed to it, or ask for a new mail' }],
          'POST /user/verification-mail': [204],
        },
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Create an account' }));
    fireEvent.change(screen.getByLabelText(/^Username/), { target: { value: 'omar' } });
    fireEvent.change(screen.getByLabelText(/^Email/), { target: { value: 'omar@corp.example' } });
    fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'omar-password' } });
    fireEvent.change(screen.getByLabelText(/^Repeat the password/), { target: { value: 'omar-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create account' }));
    await screen.findByText('Your account is made. We mailed a link to omar@corp.example: open it to verify your address, then sign in.');

    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    fireEvent.change(await screen.findByLabelText(/^Username/), { target: { value: 'omar' } });
    fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'omar-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await screen.findByText(/is not verified yet/);
    fireEvent.click(screen.getByRole('button', { name: 'Send the mail again' }));
    await screen.findByText('A new link is on its way to your address; open it, then sign in.');
    expect(calls.find((c) => c.call === 'POST /user/verification-mail')?.body).toEqual({ login: 'omar' });
  });

  it('asks for the second factor when the account has one, and signs in with the code', async () => {
    const tried: (string | null)[] = [];
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: true }],
          'POST /user/session': (req: Request) => {
            tried.push(req.headers.get('x-gitea-otp'));
            return req.headers.get('x-gitea-otp') === '123456'
              ? [201, { user: USER, session: { id: 1, current: true }, csrf_token: 'c' }]
              : [401, { message: 'a two-factor authentication code is required: send it in the X-Gitea-OTP header' }];
          },
        },
      },
    );
    await screen.findByRole('form', { name: 'Sign in with password' });
    expect(screen.queryByLabelText(/^Two-factor code/)).toBeNull();
    fireEvent.change(screen.getByLabelText(/^Username/), { target: { value: 'omar' } });
    fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'omar-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await screen.findByText(/enter the code from your authenticator app/);
    fireEvent.change(await screen.findByLabelText(/^Two-factor code/), { target: { value: '123456' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(tried).toEqual([null, '123456']));
    expect(calls.filter((c) => c.call === 'POST /user/session')).toHaveLength(2);
  });

  it('offers single sign-on, and hides the password form behind break-glass when it is for one account only', async () => {
    renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: true }],
          'GET /sign-in/methods': [200, { password: 'one-account', oidc: { name: 'Corp SSO', start_url: '/api/v1/user/oidc/start', logout_url: null } }],
        },
      },
    );
    const link = await screen.findByRole('link', { name: 'Sign in with Corp SSO' });
    expect(link.getAttribute('href')).toBe('/api/v1/user/oidc/start');
    expect(screen.queryByRole('form', { name: 'Sign in with password' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Break-glass sign-in' }));
    await screen.findByRole('form', { name: 'Sign in with password' });
  });

  it('keeps the password form for everyone when the site says so, and shows no provider when none is configured', async () => {
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: true }],
          'GET /sign-in/methods': [200, { password: 'everyone', oidc: null }],
        },
      },
    );
    await waitFor(() => expect(calls.some((c) => c.call === 'GET /sign-in/methods')).toBe(true));
    await screen.findByRole('form', { name: 'Sign in with password' });
    expect(screen.queryByRole('link', { name: /^Sign in with/ })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Break-glass sign-in' })).toBeNull();
  });

  it("offers the provider's sign-out after signing out", async () => {
    function SignedInThenOut() {
      const { session, signOut } = useSession();
      return session ? (
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      ) : (
        <SignIn from="/" />
      );
    }
    const { calls } = renderScreen(
      <SessionProvider>
        <SignedInThenOut />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: true }],
          'GET /user/session': [200, { user: USER, session: { id: 1, current: true }, csrf_token: 'c' }],
          'DELETE /user/session': [204],
          'GET /sign-in/methods': [
            200,
            { password: 'everyone', oidc: { name: 'Corp SSO', start_url: '/api/v1/user/oidc/start', logout_url: 'https://idp.example/logout?client_id=p' } },
          ],
        },
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Sign out' }));
    const logout = await screen.findByRole('link', { name: 'Sign out of Corp SSO too' });
    expect(logout.getAttribute('href')).toBe('https://idp.example/logout?client_id=p');
    expect(calls.some((c) => c.call === 'DELETE /user/session')).toBe(true);
  });

  it("does not offer the provider's sign-out to someone who only opened the sign-in screen", async () => {
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: true }],
          'GET /sign-in/methods': [
            200,
            { password: 'everyone', oidc: { name: 'Corp SSO', start_url: '/api/v1/user/oidc/start', logout_url: 'https://idp.example/logout' } },
          ],
        },
      },
    );
    await screen.findByRole('link', { name: 'Sign in with Corp SSO' });
    expect(calls.some((c) => c.call === 'GET /sign-in/methods')).toBe(true);
    expect(screen.queryByRole('link', { name: /Sign out of/ })).toBeNull();
  });
});
