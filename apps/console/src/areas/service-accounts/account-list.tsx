import { useState } from 'react';
import { Link } from 'react-router';
import { Form, joined, Section, Show, Table, useAction, when, type Column } from '../../ui';
import { AccountFieldset, accountBody, accountProblem } from './account-form';
import { useAccountRoles, useAccounts, useCreateAccount, type AccountRoutes, type Role, type ServiceAccount } from './accounts-api';

/** The console's address of an account's page. */
export const accountPath = (routes: AccountRoutes, id: number) => `${routes.base}/${id}`;

/** Role ids as names, `#id` for one the organization no longer has. */
export function roleNames(ids: number[], roles: Role[]): string {
  const names = new Map(roles.map((r) => [r.id, r.name]));
  return ids.length ? ids.map((id) => names.get(id) ?? `#${id}`).join(', ') : '—';
}

/** The Kubernetes ServiceAccounts that stand for it. */
export const subjects = (a: ServiceAccount) => (a.kubernetes_subjects.length ? a.kubernetes_subjects.map((s) => <code key={s}>{s} </code>) : '—');

/** When it was created, and by whom while that account exists. */
export const created = (a: ServiceAccount) => `${when(a.created_at)}${a.created_by ? ` by ${a.created_by.login}` : ''}`;

/** The service accounts of one side, by name, and a form to create one. */
export function AccountList({ routes }: { routes: AccountRoutes }) {
  const accounts = useAccounts(routes);
  const roles = useAccountRoles(routes);
  const loaded = joined({ accounts, roles });
  return (
    <Show loaded={loaded}>
      {({ accounts, roles }) => (
        <>
          <Section title="Service accounts">
            <AccountTable routes={routes} accounts={accounts} roles={roles} />
          </Section>
          <CreateAccount routes={routes} roles={roles} />
        </>
      )}
    </Show>
  );
}

function AccountTable({ routes, accounts, roles }: { routes: AccountRoutes; accounts: ServiceAccount[]; roles: Role[] }) {
  const columns: Column<ServiceAccount>[] = [
    { header: 'Name', cell: (a) => <Link to={accountPath(routes, a.id)}>{a.name}</Link> },
    { header: 'Description', cell: (a) => a.description || '—' },
    routes.org ? { header: 'Custom roles', cell: (a) => roleNames(a.roles, roles) } : { header: 'Site admin', cell: (a) => (a.site_admin ? 'yes' : 'no') },
    { header: 'Kubernetes subjects', cell: subjects },
    { header: 'Status', cell: (a) => (a.active ? 'Active' : <span className="muted">Inactive</span>) },
    { header: 'Created', cell: created },
  ];
  return (
    <Table
      caption={routes.org ? `Service accounts of ${routes.org} (${accounts.length})` : `Site-wide service accounts (${accounts.length})`}
      rows={accounts}
      rowKey={(a) => a.id}
      empty="none yet; create one below."
      columns={columns}
    />
  );
}

function CreateAccount({ routes, roles }: { routes: AccountRoutes; roles: Role[] }) {
  const action = useAction();
  const creation = useCreateAccount(routes);
  const [made, setMade] = useState<ServiceAccount>();
  return (
    <Section title="New service account">
      <p className="muted">
        {routes.org
          ? `An account for another team's service: it sees what a member of ${routes.org} sees, plus what its custom roles give. It is no person: it never signs in, and only its tokens (or its Kubernetes subjects) act as it.`
          : "An account for another team's service, in no organization; made a site admin, it may do what a site admin does. It is no person: it never signs in, and only its tokens (or its Kubernetes subjects) act as it."}
      </p>
      <Form
        action={action}
        label="Create service account"
        submitLabel="Create service account"
        validate={accountProblem}
        submit={async (data) => {
          const account = await creation.mutateAsync(accountBody(data, routes));
          setMade(account);
          return `Created service account ${account.name}.`;
        }}
      >
        <AccountFieldset routes={routes} roles={roles} />
      </Form>
      {made && (
        <p>
          <Link to={accountPath(routes, made.id)}>Open {made.name} to create its tokens</Link>
        </p>
      )}
    </Section>
  );
}
