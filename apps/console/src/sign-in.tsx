import { useState } from 'react';
import { useNavigate } from 'react-router';
import { appNameOf, useBranding } from './branding';
import { useSession } from './session';
import { Field, Form, missing, useAction } from './ui';

/** Sign in with a username and password (a personal token is minted for this session) or with a pasted token. */
export function SignIn({ from }: { from: string }) {
  const { branding } = useBranding();
  const { signInWithPassword, signInWithToken } = useSession();
  const navigate = useNavigate();
  const [mode, setMode] = useState<'password' | 'token'>('password');
  const action = useAction();
  return (
    <main id="main" className="sign-in">
      {branding?.logo && <img src={branding.logo} alt="" className="logo" />}
      <h1>Sign in to {appNameOf(branding)}</h1>
      <div role="tablist" aria-label="How to sign in" className="tabs">
        <button type="button" role="tab" aria-selected={mode === 'password'} onClick={() => setMode('password')}>
          Password
        </button>
        <button type="button" role="tab" aria-selected={mode === 'token'} onClick={() => setMode('token')}>
          Access token
        </button>
      </div>
      {mode === 'password' ? (
        <Form
          label="Sign in with password"
          submitLabel="Sign in"
          action={action}
          validate={(d) => missing(d, ['username', 'Username'], ['password', 'Password'])}
          submit={async (d) => {
            await signInWithPassword(String(d.get('username')).trim(), String(d.get('password')));
            navigate(from, { replace: true });
          }}
        >
          <Field label="Username" name="username" required autoComplete="username" />
          <Field label="Password" name="password" type="password" required autoComplete="current-password" />
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
          <Field label="Token" name="token" type="password" required autoComplete="off" hint="A personal access token; it is kept for this tab only." />
        </Form>
      )}
    </main>
  );
}
