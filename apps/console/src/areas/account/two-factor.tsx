import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../../api/client';
import { Field, Form, missing, Section, Show, useAction } from '../../ui';

type Enrolment = Schema<'TwoFactorEnrolment'>;

const KEY = ['account', 'two-factor'];

/**
 * The account's TOTP second factor (docs/authentication.md, "Second factor (TOTP)"): enrol by scanning a QR code and
 * confirming a first code, see the recovery codes once, replace them, or turn the factor off; the last two ask for the
 * password besides a code, and a wrong one of either counts like a failed sign-in.
 */
export function AccountTwoFactor() {
  const client = useQueryClient();
  const status = useQuery({ queryKey: KEY, queryFn: () => ok(api.GET('/user/two-factor')) });
  const [enrolment, setEnrolment] = useState<Enrolment>();
  const [codes, setCodes] = useState<string[]>();
  const begin = useMutation({ mutationFn: () => ok(api.POST('/user/two-factor/enrolment')), onSuccess: setEnrolment });
  const refresh = () => client.invalidateQueries({ queryKey: KEY });
  const confirm = useAction();
  const regenerate = useAction();
  const disable = useAction();
  const code = (d: FormData) => ({ code: String(d.get('code')).trim() });
  // Turning the factor off and renewing its codes ask for the password too: a session alone is not enough.
  const passwordAndCode = (d: FormData) => ({ password: String(d.get('password')), ...code(d) });
  return (
    <Section title="Two-factor authentication">
      {codes && (
        <div role="region" aria-label="Recovery codes">
          <p>
            <strong>Recovery codes.</strong> Keep them somewhere safe: each signs you in once in place of a code, and they are
            not shown again.
          </p>
          <ul className="recovery-codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      <Show loaded={status}>
        {(s) =>
          s.enabled ? (
            <>
              <p>On. {s.recovery_codes_left} recovery codes left.</p>
              <Form
                label="New recovery codes"
                submitLabel="Make new recovery codes"
                action={regenerate}
                validate={(d) => missing(d, ['password', 'Password'], ['code', 'Code'])}
                submit={async (d) => {
                  setCodes((await ok(api.POST('/user/two-factor/recovery-codes', { body: passwordAndCode(d) }))).recovery_codes);
                  await refresh();
                  return 'New recovery codes made; the old ones no longer work.';
                }}
              >
                <Field label="Password" name="password" type="password" required autoComplete="current-password" />
                <Field label="Code" name="code" required autoComplete="one-time-code" hint="A current code of your authenticator app." />
              </Form>
              <Form
                label="Turn off two-factor authentication"
                submitLabel="Turn off"
                action={disable}
                validate={(d) => missing(d, ['password', 'Password'], ['code', 'Code'])}
                submit={async (d) => {
                  await ok(api.POST('/user/two-factor/disable', { body: passwordAndCode(d) }));
                  setCodes(undefined);
                  await refresh();
                  return 'Two-factor authentication is off.';
                }}
              >
                <Field label="Password" name="password" type="password" required autoComplete="current-password" />
                <Field label="Code" name="code" required autoComplete="one-time-code" hint="A current code, or a recovery code." />
              </Form>
            </>
          ) : (
            <>
              <p className="muted">
                {s.required
                  ? 'This site requires a second factor of your account: set one up to use the console.'
                  : 'Add a code from an authenticator app to every password sign-in.'}
              </p>
              {!enrolment ? (
                <button type="button" disabled={begin.isPending} onClick={() => begin.mutate()}>
                  Set up two-factor authentication
                </button>
              ) : (
                <>
                  <img
                    className="qr"
                    alt={`QR code of ${enrolment.otpauth_uri}`}
                    src={`data:image/svg+xml;base64,${btoa(enrolment.qr_svg)}`}
                    width={200}
                    height={200}
                  />
                  <p>
                    Scan it with your authenticator app, or enter the key <code>{enrolment.secret}</code> by hand.
                  </p>
                  <Form
                    label="Confirm two-factor authentication"
                    submitLabel="Turn on"
                    action={confirm}
                    validate={(d) => missing(d, ['code', 'Code'])}
                    submit={async (d) => {
                      setCodes((await ok(api.POST('/user/two-factor', { body: code(d) }))).recovery_codes);
                      setEnrolment(undefined);
                      await refresh();
                      return 'Two-factor authentication is on.';
                    }}
                  >
                    <Field label="Code" name="code" required autoComplete="one-time-code" hint="The 6-digit code the app shows now." />
                  </Form>
                </>
              )}
            </>
          )
        }
      </Show>
    </Section>
  );
}
