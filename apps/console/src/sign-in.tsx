import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, ok } from './api/client';
import { appNameOf, useBranding } from './branding';
import { ForgotPassword } from './password-reset';
import { useSession } from './session';
import { SignUp, useRegistrationOpen } from './sign-up';
import { Field, Form, missing, useAction } from './ui';

/**
 * Sign in through the site's identity provider when it has one, with a username and password (a session kept in an
 * HttpOnly cookie) or with a pasted token; while the site takes sign-ups, create an account instead. A forgotten password
 * is reset by a mailed link.
 */
export function SignIn({ from }: { from: string }) {
  const { branding } = useBranding();
  const { signInWithPassword, signInWithToken, signedOut } = useSession();
  const navigate = useNavigate();
  const [mode, setMode] = useState<'password' | 'token' | 'sign-up' | 'forgot'>('password');
  // Until the gateway answers, the password form shows as before: a site without single sign-on must not wait for it.
  const methods = useQuery({ queryKey: ['sign-in-methods'], queryFn: () => ok(api.GET('/sign-in/methods')) }).data;
  const sso = methods?.oidc ?? undefined;
  // When the password form is for the break-glass account only, everyone else is sent to the provider first.
  const [breakGlass, setBreakGlass] = useState(false);
  const formsShown = methods?.password !== 'one-account' || breakGlass;
  // Set once the gateway says the account has a second factor: the form then asks for its code as well.
  const [askCode, setAskCode] = useState(false);
  // Set when the password was right but the account's address is not verified yet: a new mail may be asked for.
  const [unverified, setUnverified] = useState<string>();
  const [resent, setResent] = useState(false);
  const registrationOpen = useRegistrationOpen();
  const action = useAction();
  if (mode === 'sign-up' && registrationOpen)
    return (
      <main id="main" className="sign-in">
        {branding?.logo && <img src={branding.logo} alt="" className="logo" />}
        <h1>Sign up to {appNameOf(branding)}</h1>
        <SignUp from={from} onCancel={() => setMode('password')} />
      </main>
    );
  if (mode === 'forgot')
    return (
      <main id="main" className="sign-in">
        {branding?.logo && <img src={branding.logo} alt="" className="logo" />}
        <h1>Forgot your password?</h1>
        <ForgotPassword onCancel={() => setMode('password')} />
      </main>
    );
  return (
    <main id="main" className="sign-in">
      {branding?.logo && <img src={branding.logo} alt="" className="logo" />}
      <h1>Sign in to {appNameOf(branding)}</h1>
      {signedOut && sso?.logout_url && (
        <p role="status">
          You are signed out here. <a href={sso.logout_url}>Sign out of {sso.name} too</a>
        </p>
      )}
      {sso && (
        <p className="sso">
          {/* A plain link: the start is a redirect to the provider, not a console screen. */}
          <a href={sso.start_url}>Sign in with {sso.name}</a>
        </p>
      )}
      {!formsShown && (
        <p>
          <button type="button" onClick={() => setBreakGlass(true)}>
            Break-glass sign-in
          </button>
        </p>
      )}
      {formsShown && (
        <>
          <div role="tablist" aria-label="How to sign in" className="tabs">
            <button type="button" role="tab" aria-selected={mode === 'password'} onClick={() => setMode('password')}>
              Password
            </button>
            <button type="button" role="tab" aria-selected={mode === 'token'} onClick={() => setMode('token')}>
              Access token
            </button>
          </div>
          {mode === 'password' && unverified && (
            <p role="status">
              {resent ? (
                'A new link is on its way to your address; open it, then sign in.'
              ) : (
                <button
                  type="button"
                  onClick={async () => {
                    await ok(api.POST('/user/verification-mail', { body: { login: unverified } }));
                    setResent(true);
                  }}
                >
                  Send the mail again
                </button>
              )}
            </p>
          )}
          {mode === 'password' ? (
            <Form
              label="Sign in with password"
              submitLabel="Sign in"
              action={action}
              validate={(d) =>
                askCode
                  ? missing(d, ['username', 'Username'], ['password', 'Password'], ['otp', 'Two-factor code'])
                  : missing(d, ['username', 'Username'], ['password', 'Password'])
              }
              submit={async (d) => {
                try {
                  await signInWithPassword(
                    String(d.get('username')).trim(),
                    String(d.get('password')),
                    askCode ? String(d.get('otp')).trim() : undefined,
                  );
                } catch (err) {
                  if (err instanceof ApiError && err.status === 403 && /is not verified yet/.test(err.message)) {
                    setUnverified(String(d.get('username')).trim());
                    setResent(false);
                  }
                  if (err instanceof ApiError && err.status === 401 && /two-factor authentication code is required/.test(err.message)) {
                    setAskCode(true);
                    throw new ApiError(
                      401,
                      'This account has two-factor authentication: enter the code from your authenticator app, or a recovery code.',
                    );
                  }
                  throw err;
                }
                navigate(from, { replace: true });
              }}
            >
              <Field label="Username" name="username" required autoComplete="username" />
              <Field label="Password" name="password" type="password" required autoComplete="current-password" />
              {askCode && (
                <Field
                  label="Two-factor code"
                  name="otp"
                  required
                  autoComplete="one-time-code"
                  hint="The 6-digit code of your authenticator app, or one of your recovery codes."
                />
              )}
            </Form>
          ) : (
            <Form
              label="Sign in with an access token"
              submitLabel="Sign in"
              action={action}
              validate={(d) => missing(d, ['token', 'Token'])}
              submit={async (d) => {
                await signInWithToken(String(d.get('token')));
                navigate(from, { replace: true });
              }}
            >
              <Field
                label="Token"
                name="token"
                type="password"
                required
                autoComplete="off"
                hint="A personal access token; it is kept for this tab only."
              />
            </Form>
          )}
          {mode === 'password' && (
            <p>
              <button type="button" onClick={() => setMode('forgot')}>
                Forgot password?
              </button>
            </p>
          )}
        </>
      )}
      {registrationOpen && (
        <p>
          No account yet?{' '}
          <button type="button" onClick={() => setMode('sign-up')}>
            Create an account
          </button>
        </p>
      )}
    </main>
  );
}
