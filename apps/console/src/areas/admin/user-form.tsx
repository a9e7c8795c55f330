import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { ErrorMessage } from '../../ui';
import { fieldErrors, useCreateUser, useEditUser, type EditUser, type User } from './admin-users-api';

// The forms of the users screen: a new user, and a user's e-mail, name, password and flags. Both check what they can
// before sending and show the API's 422 field errors beside the fields they are about.

/** The rules orgs-teams applies (docs/authentication.md), checked first so a typo costs no round trip. */
const LOGIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD = 8;

type Problems = Record<string, string>;

const text = (data: FormData, name: string) => String(data.get(name) ?? '').trim();

/** A labelled input with its problem beside it, tied to it for assistive technology. */
function Input({
  label,
  name,
  problem,
  hint,
  type = 'text',
  required,
  defaultValue,
  autoComplete,
}: {
  label: string;
  name: string;
  problem?: string;
  hint?: string;
  type?: string;
  required?: boolean;
  defaultValue?: string;
  autoComplete?: string;
}) {
  const id = useId();
  const described = [problem && `${id}-problem`, hint && `${id}-hint`].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {required && <span aria-hidden="true"> *</span>}
      </label>
      <input id={id} name={name} type={type} defaultValue={defaultValue} autoComplete={autoComplete} aria-invalid={problem ? true : undefined} aria-describedby={described} />
      {problem && (
        <small id={`${id}-problem`} className="error">
          {problem}
        </small>
      )}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

function Flag({ label, name, defaultChecked, disabled, problem }: { label: string; name: string; defaultChecked: boolean; disabled?: boolean; problem?: string }) {
  return (
    <div className="field">
      <label>
        <input type="checkbox" name={name} defaultChecked={defaultChecked} disabled={disabled} aria-invalid={problem ? true : undefined} /> {label}
      </label>
      {problem && <small className="error">{problem}</small>}
    </div>
  );
}

/** A flag whose current value the API does not show (it is not in Gitea's User): left as it is unless chosen. */
function Setting({ label, name }: { label: string; name: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue="">
        <option value="">Leave as it is</option>
        <option value="yes">Yes</option>
        <option value="no">No</option>
      </select>
    </div>
  );
}

/** The form's own check or the API's answer: problems by field, and the message of anything else. */
function Problems({ problems, error }: { problems: Problems; error: unknown }) {
  const general = problems[''];
  if (general)
    return (
      <p role="alert" className="error">
        {general}
      </p>
    );
  return <ErrorMessage error={error} />;
}

function Done({ children }: { children?: ReactNode }) {
  if (!children) return null;
  return (
    <p role="status" className="done">
      {children}
    </p>
  );
}

/** New user: username, e-mail, password (at least eight characters), full name, must change password. */
export function CreateUserForm() {
  const create = useCreateUser();
  const [problems, setProblems] = useState<Problems>({});
  const [done, setDone] = useState<string>();
  const shown = { ...fieldErrors(create.error), ...problems };
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const found: Problems = {};
    if (!LOGIN.test(text(data, 'username'))) found.username = 'Letters, digits, ".", "_" or "-" inside; at most 40 characters';
    if (!EMAIL.test(text(data, 'email'))) found.email = 'Not an e-mail address';
    if (String(data.get('password') ?? '').length < MIN_PASSWORD) found.password = `At least ${MIN_PASSWORD} characters`;
    setProblems(found);
    setDone(undefined);
    create.reset();
    if (Object.keys(found).length) return;
    const fullName = text(data, 'full_name');
    create.mutate(
      {
        username: text(data, 'username'),
        email: text(data, 'email'),
        password: String(data.get('password')),
        ...(fullName && { full_name: fullName }),
        must_change_password: data.get('must_change_password') !== null,
      },
      {
        onSuccess: (user) => {
          form.reset();
          setDone(`Created user ${user.login}.`);
        },
      },
    );
  };
  return (
    <form onSubmit={onSubmit} aria-label="New user" className="form" noValidate>
      <Input label="Username" name="username" required problem={shown.username} autoComplete="off" />
      <Input label="Email" name="email" type="email" required problem={shown.email} autoComplete="off" />
      <Input label="Password" name="password" type="password" required problem={shown.password} autoComplete="new-password" hint={`At least ${MIN_PASSWORD} characters`} />
      <Input label="Full name" name="full_name" problem={shown.full_name} />
      <Flag label="Must change password at first sign-in" name="must_change_password" defaultChecked />
      <button type="submit" disabled={create.isPending}>
        {create.isPending ? 'Working…' : 'Create user'}
      </button>
      <ErrorMessage error={create.error} />
      <Done>{done}</Done>
    </form>
  );
}

/**
 * What the form changes of `user`: only the fields that differ from it (and a new password when one is typed), so
 * saving an untouched flag never rewrites it. `self` leaves out what the API refuses one's own account: the site
 * admin flag, being active and being allowed to sign in.
 */
export function editOf(user: User, data: FormData, self: boolean): EditUser {
  const body: EditUser = {};
  const email = text(data, 'email');
  if (email !== user.email) body.email = email;
  const fullName = text(data, 'full_name');
  if (fullName !== user.full_name) body.full_name = fullName;
  const password = String(data.get('password') ?? '');
  if (password) body.password = password;
  if (!self) {
    const admin = data.get('admin') !== null;
    if (admin !== user.is_admin) body.admin = admin;
    const active = data.get('active') !== null;
    if (active !== user.active) body.active = active;
    const prohibit = data.get('prohibit_login') !== null;
    if (prohibit !== user.prohibit_login) body.prohibit_login = prohibit;
  }
  const setting = (name: string) => (data.get(name) === 'yes' ? true : data.get(name) === 'no' ? false : undefined);
  const mustChange = setting('must_change_password');
  if (mustChange !== undefined) body.must_change_password = mustChange;
  const allowOrgs = setting('allow_create_organization');
  if (allowOrgs !== undefined) body.allow_create_organization = allowOrgs;
  return body;
}

/** A user's e-mail, full name, new password and flags; sends only what changed. */
export function EditUserForm({ user, self, onClose }: { user: User; self: boolean; onClose: () => void }) {
  const edit = useEditUser();
  const [problems, setProblems] = useState<Problems>({});
  const [done, setDone] = useState<string>();
  const shown = { ...fieldErrors(edit.error), ...problems };
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const body = editOf(user, data, self);
    const found: Problems = {};
    if (body.email !== undefined && !EMAIL.test(body.email)) found.email = 'Not an e-mail address';
    if (body.password !== undefined && body.password.length < MIN_PASSWORD) found.password = `At least ${MIN_PASSWORD} characters`;
    if (!Object.keys(found).length && !Object.keys(body).length) found[''] = 'Nothing to save: no field differs from the user.';
    setProblems(found);
    setDone(undefined);
    edit.reset();
    if (Object.keys(found).length) return;
    edit.mutate(
      { username: user.login, body },
      {
        onSuccess: (saved) => {
          // The new password is not kept in the form, and a chosen setting goes back to "leave as it is".
          for (const name of ['password', 'must_change_password', 'allow_create_organization']) {
            const field = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement | null;
            if (field) field.value = '';
          }
          setDone(`Saved user ${saved.login}.`);
        },
      },
    );
  };
  const own = self ? 'You cannot take these from your own account; another site admin can.' : undefined;
  return (
    <form onSubmit={onSubmit} aria-label={`Edit user ${user.login}`} className="form" noValidate>
      <Input label="Email" name="email" type="email" defaultValue={user.email} problem={shown.email} autoComplete="off" />
      <Input label="Full name" name="full_name" defaultValue={user.full_name} problem={shown.full_name} />
      <Input label="New password" name="password" type="password" problem={shown.password} autoComplete="new-password" hint="Leave empty to keep the password; a new one lifts a sign-in lockout" />
      <fieldset>
        <legend>Sign-in and rights</legend>
        <Flag label="Site admin" name="admin" defaultChecked={user.is_admin} disabled={self} problem={shown.admin} />
        <Flag label="Active" name="active" defaultChecked={user.active} disabled={self} problem={shown.active} />
        <Flag label="Prohibit sign-in" name="prohibit_login" defaultChecked={user.prohibit_login} disabled={self} problem={shown.prohibit_login} />
        {own && <small>{own}</small>}
      </fieldset>
      <Setting label="Must change password" name="must_change_password" />
      <Setting label="Allow creating organizations" name="allow_create_organization" />
      <button type="submit" disabled={edit.isPending}>
        {edit.isPending ? 'Working…' : 'Save user'}
      </button>{' '}
      <button type="button" onClick={onClose}>
        Close
      </button>
      <Problems problems={problems} error={edit.error} />
      <Done>{done}</Done>
    </form>
  );
}
