import { fireEvent, screen, waitFor } from '@testing-library/react';
import { useLocation } from 'react-router';
import { renderScreen } from '../test/render';
import { ResetPassword } from './password-reset';
import { SessionProvider } from './session';
import { SignIn } from './sign-in';

const branding = [200, { appName: 'Platform', logo: '', favicons: {}, primaryColor: '#000000', showAppTag: false }] as [number, unknown];
const CODE = `${'s'.repeat(22)}.${'v'.repeat(43)}`;

/** The reset page, with what the address bar shows beside it. */
function ResetPage() {
  const { pathname, hash } = useLocation();
  return (
    <>
      <ResetPassword />
      <code aria-label="Address">{pathname + hash}</code>
    </>
  );
}

const openLink = (answers: Parameters<typeof renderScreen>[1]['answers'], hash = `#code=${CODE}`) =>
  renderScreen(
    <SessionProvider>
      <ResetPage />
    </SessionProvider>,
    { path: `/reset-password${hash}`, pattern: '/reset-password', answers: { 'GET /branding': branding, ...answers } },
  );

describe('forgotten passwords', () => {
  beforeEach(() => sessionStorage.clear());

  it('asks for a link from the sign-in screen, saying the same whatever the name', async () => {
    const { calls } = renderScreen(
      <SessionProvider>
        <SignIn from="/" />
      </SessionProvider>,
      {
        answers: {
          'GET /branding': branding,
          'GET /disable-registration': [200, { disableRegistration: true }],
          'POST /user/password-reset': [204],
        },
      },
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Forgot password?' }));
    const form = screen.getByRole('form', { name: 'Forgot password' });
    fireEvent.click(screen.getByRole('button', { name: 'Send the link' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Username or e-mail address is required');
    fireEvent.change(screen.getByLabelText(/^Username or e-mail address/), { target: { value: ' omar@corp.example ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send the link' }));
    expect((await screen.findByRole('status')).textContent).toMatch(
      /^If an account exists for that name, we sent a link to its e-mail address/,
    );
    expect(calls.find((c) => c.call === 'POST /user/password-reset')?.body).toEqual({ login: 'omar@corp.example' });
    expect(form.isConnected).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: 'Back to sign-in' }));
    await screen.findByRole('form', { name: 'Sign in with password' });
  });

  it('opens the mailed link: names the account, takes the code out of the address bar, and sets the new password once', async () => {
    const { calls } = openLink({
      'POST /user/password-reset/check': [200, { login: 'omar', expires_at: '2030-01-01T00:00:00.000Z' }],
      'POST /user/password-reset/new-password': [204],
    });
    await screen.findByText('omar');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Set a new password');
    await waitFor(() => expect(screen.getByLabelText('Address').textContent).toBe('/reset-password'));
    expect(calls.filter((c) => c.call === 'POST /user/password-reset/check').map((c) => c.body)).toEqual([{ code: CODE }]);

    fireEvent.change(screen.getByLabelText(/^New password/), { target: { value: 'omar-new-password' } });
    fireEvent.change(screen.getByLabelText(/^Repeat the new password/), { target: { value: 'something-else' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password' }));
    expect((await screen.findByRole('alert')).textContent).toBe('The new passwords do not match');
    fireEvent.change(screen.getByLabelText(/^Repeat the new password/), { target: { value: 'omar-new-password' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password' }));
    expect((await screen.findByRole('status')).textContent).toMatch(
      /^Your new password is set\. Every console session of your account was signed out/,
    );
    expect(calls.find((c) => c.call === 'POST /user/password-reset/new-password')?.body).toEqual({
      code: CODE,
      new_password: 'omar-new-password',
    });
    expect(screen.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe('/signin');
  });

  it('says a used or expired link is not valid and offers a new one at once', async () => {
    const { calls } = openLink({
      'POST /user/password-reset/check': [400, { message: 'this password reset link is not valid any more: ask for a new one' }],
      'POST /user/password-reset': [204],
    });
    expect((await screen.findByRole('alert')).textContent).toMatch(/^This link is not valid any more/);
    expect(screen.queryByRole('form', { name: 'Set a new password' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Ask for a new link' }));
    fireEvent.change(screen.getByLabelText(/^Username or e-mail address/), { target: { value: 'omar' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send the link' }));
    await screen.findByText(/^If an account exists for that name/);
    expect(calls.find((c) => c.call === 'POST /user/password-reset')?.body).toEqual({ login: 'omar' });
  });

  it('asks nothing for a link without a code', async () => {
    const { calls } = openLink({}, '');
    expect((await screen.findByRole('alert')).textContent).toMatch(/^This link is not valid any more/);
    expect(calls.some((c) => c.call === 'POST /user/password-reset/check')).toBe(false);
  });

  it('shows the limit of the address when it is reached', async () => {
    openLink({
      'POST /user/password-reset/check': [429, { message: 'too many password-reset requests from this address; try again in 60 s' }],
    });
    expect((await screen.findByRole('alert')).textContent).toBe(
      'too many password-reset requests from this address; try again in 60 s (429)',
    );
  });
});
