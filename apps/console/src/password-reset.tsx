import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, ApiError, ok } from './api/client';
import { useBranding } from './branding';
import { useSession } from './session';
import { ErrorMessage, Field, Form, missing, useAction } from './ui';

/** The page a mailed reset link opens (orgs-teams' RESET_PAGE); its code is in the fragment, which no server sees. */
export const RESET_PASSWORD_PATH = '/reset-password';

/**
 * Ask for a link that sets a new password (docs/authentication.md, "Forgotten passwords"). The answer is the same
 * whether or not the name is an account's, and so is what the screen says.
 */
export function ForgotPassword({ onCancel }: { onCancel: () => void }) {
  const action = useAction();
  const [asked, setAsked] = useState(false);
  if (asked)
    return (
      <>
        <p role="status">
          If an account exists for that name, we sent a link to its e-mail address. Open it soon: it works once, for a short time.
        </p>
        <p>
          <button type="button" onClick={onCancel}>
            Back to sign-in
          </button>
        </p>
      </>
    );
  return (
    <>
      <p>Enter your username or e-mail address. If an account exists, we mail a link to its address to choose a new password.</p>
      <Form
        label="Forgot password"
        submitLabel="Send the link"
        action={action}
        validate={(d) => missing(d, ['login', 'Username or e-mail address'])}
        submit={async (d) => {
          await ok(api.POST('/user/password-reset', { body: { login: String(d.get('login')).trim() } }));
          setAsked(true);
        }}
      >
        <Field label="Username or e-mail address" name="login" required autoComplete="username" />
      </Form>
      <p>
        <button type="button" onClick={onCancel}>
          Back to sign-in
        </button>
      </p>
    </>
  );
}

/** The frame of the signed-out pages, as the sign-in screen's: the site's logo above. */
function SignedOutPage({ title, children }: { title: string; children: ReactNode }) {
  const { branding } = useBranding();
  return (
    <main id="main" className="sign-in">
      {branding?.logo && <img src={branding.logo} alt="" className="logo" />}
      <h1>{title}</h1>
      {children}
    </main>
  );
}

/**
 * Where a mailed link leads: whose password it sets, a form for the new one, and the way to sign in with it. A link that
 * does not work (used, replaced, expired) offers a new one at once.
 */
export function ResetPassword() {
  const { hash, pathname } = useLocation();
  const navigate = useNavigate();
  const { session, ended } = useSession();
  // Read once, then taken out of the address bar (and so out of the history entry), where anyone looking could read it.
  const [code] = useState(() => new URLSearchParams(hash.slice(1)).get('code') ?? '');
  useEffect(() => {
    if (hash) navigate(pathname, { replace: true });
  }, [hash, pathname, navigate]);
  const link = useQuery({
    queryKey: ['password-reset', code],
    queryFn: () => ok(api.POST('/user/password-reset/check', { body: { code } })),
    enabled: code !== '',
    // Asked once: a used link asked again would count as an invalid one.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const action = useAction();
  const [done, setDone] = useState(false);
  const [askNew, setAskNew] = useState(false);

  if (done)
    return (
      <SignedOutPage title="Password set">
        <p role="status">
          Your new password is set. Every console session of your account was signed out; access tokens keep working (review them on your
          account page).
        </p>
        <p>
          <Link to="/signin">Sign in</Link>
        </p>
      </SignedOutPage>
    );
  if (askNew)
    return (
      <SignedOutPage title="Forgot your password?">
        <ForgotPassword onCancel={() => navigate('/signin')} />
      </SignedOutPage>
    );
  const invalid = !code || (link.error instanceof ApiError && link.error.status === 400);
  return (
    <SignedOutPage title="Set a new password">
      {invalid ? (
        <>
          <p role="alert" className="error">
            This link is not valid any more: it was used, replaced by a newer one, or it expired.
          </p>
          <p>
            <button type="button" onClick={() => setAskNew(true)}>
              Ask for a new link
            </button>
          </p>
        </>
      ) : link.error ? (
        <ErrorMessage error={link.error} />
      ) : !link.data ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          <p>
            Choose a new password for <strong>{link.data.login}</strong>.
          </p>
          <Form
            label="Set a new password"
            submitLabel="Set password"
            action={action}
            validate={(d) => {
              if (String(d.get('new_password')).length < 8) return 'The new password needs at least 8 characters';
              if (d.get('new_password') !== d.get('confirm')) return 'The new passwords do not match';
              return undefined;
            }}
            submit={async (d) => {
              await ok(api.POST('/user/password-reset/new-password', { body: { code, new_password: String(d.get('new_password')) } }));
              // The server ended every session of the account, this browser's included.
              if (session?.kind === 'cookie') ended();
              setDone(true);
            }}
          >
            {/* For password managers: the account the new password belongs to. */}
            <input type="text" name="username" autoComplete="username" value={link.data.login} readOnly hidden />
            <Field
              label="New password"
              name="new_password"
              type="password"
              required
              autoComplete="new-password"
              hint="At least 8 characters."
            />
            <Field label="Repeat the new password" name="confirm" type="password" required autoComplete="new-password" />
          </Form>
        </>
      )}
      <p>
        <Link to="/signin">Back to sign-in</Link>
      </p>
    </SignedOutPage>
  );
}
