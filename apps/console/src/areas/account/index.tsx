import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../../api/client';
import { Field, Form, Section, Show, useAction } from '../../ui';
import { TextArea } from '../../ui/controls';
import { AccountEmail, AccountProviderLink } from './address-and-provider';
import { AccountSessions } from './sessions';
import { AccountTokens } from './tokens';
import { AccountTwoFactor } from './two-factor';

/** The signed-in user's own account: profile, password, second factor, personal access tokens and console sessions. */
export default function AccountArea() {
  return (
    <>
      <h1>Your account</h1>
      <AccountEmail />
      <Profile />
      <PasswordChange />
      <AccountProviderLink />
      <AccountTwoFactor />
      <AccountTokens />
      <AccountSessions />
    </>
  );
}

/** GET/PATCH /user/settings: the fields left out stay as they are. */
function Profile() {
  const client = useQueryClient();
  const settings = useQuery({ queryKey: ['account', 'settings'], queryFn: () => ok(api.GET('/user/settings')) });
  const save = useMutation({
    mutationFn: (body: { full_name: string; website: string; location: string; description: string }) =>
      ok(api.PATCH('/user/settings', { body })),
    onSuccess: (saved) => client.setQueryData(['account', 'settings'], saved),
  });
  const action = useAction();
  return (
    <Section title="Profile">
      <Show loaded={settings}>
        {(s) => (
          <Form
            label="Profile"
            action={action}
            submit={async (d) => {
              const text = (name: string) => String(d.get(name) ?? '').trim();
              await save.mutateAsync({ full_name: text('full_name'), website: text('website'), location: text('location'), description: text('description') });
              return 'Profile saved.';
            }}
          >
            <Field label="Full name" name="full_name" defaultValue={s.full_name} autoComplete="name" />
            <Field label="Website" name="website" defaultValue={s.website} />
            <Field label="Location" name="location" defaultValue={s.location} />
            <TextArea label="Description" name="description" defaultValue={s.description} />
          </Form>
        )}
      </Show>
    </Section>
  );
}

/** POST /user/password, giving the old password (a wrong one counts like a failed sign-in). */
function PasswordChange() {
  const action = useAction();
  return (
    <Section title="Password">
      <Form
        label="Change password"
        submitLabel="Change password"
        action={action}
        validate={(d) => {
          if (!String(d.get('old_password'))) return 'Current password is required';
          if (String(d.get('new_password')).length < 8) return 'The new password needs at least 8 characters';
          if (d.get('new_password') !== d.get('confirm')) return 'The new passwords do not match';
          return undefined;
        }}
        submit={async (d) => {
          await ok(api.POST('/user/password', { body: { old_password: String(d.get('old_password')), new_password: String(d.get('new_password')) } }));
          return 'Password changed.';
        }}
      >
        <Field label="Current password" name="old_password" type="password" required autoComplete="current-password" />
        <Field label="New password" name="new_password" type="password" required autoComplete="new-password" hint="At least 8 characters." />
        <Field label="Repeat the new password" name="confirm" type="password" required autoComplete="new-password" />
      </Form>
    </Section>
  );
}
