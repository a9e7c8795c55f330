import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, ok } from './api/client';
import { useSession } from './session';
import { Field, Form, missing, useAction } from './ui';

/** Whether the site takes sign-ups now (docs/site-settings.md); read before the sign-in screen offers it. */
export function useRegistrationOpen(): boolean {
  const registration = useQuery({ queryKey: ['registration'], queryFn: () => ok(api.GET('/disable-registration')) });
  return registration.data?.disableRegistration === false;
}

/** Create an account (while the site takes sign-ups) and be signed in to it. */
export function SignUp({ from, onCancel }: { from: string; onCancel: () => void }) {
  const { signUp } = useSession();
  const navigate = useNavigate();
  const action = useAction();
  // Set when the account was made but signs in only once its address is verified (the site lists allowed domains).
  const [mailedTo, setMailedTo] = useState<string>();
  if (mailedTo)
    return (
      <>
        <h2>Verify your e-mail address</h2>
        <p role="status">
          Your account is made. We mailed a link to {mailedTo}: open it to verify your address, then sign in.
        </p>
        <p>
          <button type="button" onClick={onCancel}>
            Sign in
          </button>
        </p>
      </>
    );
  return (
    <>
      <h2>Create an account</h2>
      <Form
        label="Create an account"
        submitLabel="Create account"
        action={action}
        validate={(d) => {
          const absent = missing(d, ['username', 'Username'], ['email', 'Email'], ['password', 'Password']);
          if (absent) return absent;
          if (String(d.get('password')) !== String(d.get('confirm'))) return 'The passwords do not match';
          return undefined;
        }}
        submit={async (d) => {
          const email = String(d.get('email')).trim();
          const signedIn = await signUp({ username: String(d.get('username')).trim(), email, password: String(d.get('password')) });
          if (signedIn) navigate(from, { replace: true });
          else setMailedTo(email);
        }}
      >
        <Field label="Username" name="username" required autoComplete="username" />
        <Field label="Email" name="email" type="email" required autoComplete="email" />
        <Field label="Password" name="password" type="password" required autoComplete="new-password" hint="At least 8 characters." />
        <Field label="Repeat the password" name="confirm" type="password" required autoComplete="new-password" />
      </Form>
      <p>
        <button type="button" onClick={onCancel}>
          I have an account: sign in
        </button>
      </p>
    </>
  );
}
