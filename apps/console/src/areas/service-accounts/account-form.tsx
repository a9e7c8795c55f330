import { useUser } from '../../session';
import { Field } from '../../ui';
import { Choices } from '../../ui/choices';
import { Checkbox, TextArea } from '../../ui/controls';
import type { AccountFields, AccountRoutes, Role, ServiceAccount } from './accounts-api';

/**
 * The rules the API applies to an account (docs/service-accounts.md), checked before sending so the form can say
 * what is wrong without a round trip; the API checks them again and its message is shown if it refuses.
 */

/** An account's name is a login: letters, digits, and . _ - inside, at most 40 characters. */
const LOGIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,38}[a-zA-Z0-9])?$/;
const MAX_DESCRIPTION = 255;
/** Most Kubernetes subjects one account has. */
const MAX_SUBJECTS = 50;
/** `<namespace>/<name>` of a Kubernetes ServiceAccount: a DNS label, a slash, a DNS subdomain (at most 253). */
const DNS_LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
const SUBJECT = new RegExp(`^${DNS_LABEL}/${DNS_LABEL}(?:\\.${DNS_LABEL})*$`);

const text = (data: FormData, name: string) => String(data.get(name) ?? '').trim();

/** The Kubernetes subjects typed one a line, blank lines left out. */
const subjectLines = (data: FormData) =>
  String(data.get('kubernetes_subjects') ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/**
 * The fields of an account, empty for a new one or filled from `account`: on an organization's side its custom
 * roles, on the site's whether it is a site admin.
 */
export function AccountFieldset({ routes, roles, account }: { routes: AccountRoutes; roles: Role[]; account?: ServiceAccount }) {
  // Binding Kubernetes ServiceAccounts is for site admins (the API refuses owners with 403).
  const { is_admin: siteAdmin } = useUser();
  const bindsSubjects = !routes.org || siteAdmin;
  return (
    <>
      <Field label="Name" name="name" required defaultValue={account?.name} hint="Letters, digits, . _ - inside; at most 40; unique among all accounts" autoComplete="off" />
      <Field label="Description" name="description" defaultValue={account?.description} />
      {routes.org ? (
        <Choices
          legend="Custom roles"
          name="roles"
          choices={roles.map((r) => ({ value: String(r.id), label: r.name }))}
          checked={new Set((account?.roles ?? []).map(String))}
          empty="The organization has no custom roles yet (see Roles)."
        />
      ) : (
        <Checkbox label="Site admin" name="site_admin" defaultChecked={account?.site_admin} />
      )}
      {bindsSubjects ? (
        <TextArea
          label="Kubernetes subjects"
          name="kubernetes_subjects"
          defaultValue={account?.kubernetes_subjects.join('\n')}
          hint="namespace/name of a Kubernetes ServiceAccount, one a line: its tokens authenticate as this account"
        />
      ) : (
        <p className="muted">
          Kubernetes subjects: {account?.kubernetes_subjects.length ? account.kubernetes_subjects.join(', ') : 'none'}. A site admin binds
          them: an owner cannot show that a Kubernetes ServiceAccount is theirs.
        </p>
      )}
    </>
  );
}

export function accountProblem(data: FormData): string | undefined {
  const name = text(data, 'name');
  if (!name) return 'Name is required';
  if (!LOGIN.test(name)) return 'Name: letters, digits, ".", "_" or "-" inside (not at either end); at most 40 characters';
  if (text(data, 'description').length > MAX_DESCRIPTION) return `Description: at most ${MAX_DESCRIPTION} characters`;
  const subjects = subjectLines(data);
  if (subjects.length > MAX_SUBJECTS) return `Kubernetes subjects: at most ${MAX_SUBJECTS}`;
  const wrong = subjects.find((s) => !SUBJECT.test(s) || s.length - s.indexOf('/') - 1 > 253);
  if (wrong) return `Kubernetes subjects: "${wrong}" is not namespace/name of a Kubernetes ServiceAccount (lower-case letters, digits, "-", and "." in the name)`;
  return undefined;
}

/** The body of a create or edit: every list always, so emptying one removes what it held (`[]`). */
export function accountBody(data: FormData, routes: AccountRoutes): AccountFields & { name: string } {
  return {
    name: text(data, 'name'),
    description: text(data, 'description'),
    // Absent from the form (an owner's), absent from the body: the subjects a site admin bound stay.
    ...(data.has('kubernetes_subjects') ? { kubernetes_subjects: subjectLines(data) } : {}),
    ...(routes.org
      ? { roles: data.getAll('roles').map(Number).filter((id) => Number.isInteger(id) && id > 0) }
      : { site_admin: data.get('site_admin') !== null }),
  };
}
