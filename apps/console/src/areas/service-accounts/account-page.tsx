import { useNavigate } from 'react-router';
import { Form, joined, Outcome, Section, Show, useAction } from '../../ui';
import { ConfirmButton } from '../../ui/controls';
import { AccountFieldset, accountBody, accountProblem } from './account-form';
import { created, roleNames, subjects } from './account-list';
import { useAccount, useAccountRoles, useDeleteAccount, useEditAccount, type AccountRoutes, type Role, type ServiceAccount } from './accounts-api';
import { Tokens } from './tokens';

/** One service account: what it is, its tokens, editing it, deactivating or activating it, deleting it. */
export function AccountPage({ routes, id }: { routes: AccountRoutes; id: number }) {
  const account = useAccount(routes, id);
  const roles = useAccountRoles(routes);
  const loaded = joined({ account, roles });
  return (
    <Show loaded={loaded}>
      {({ account, roles }) => (
        <>
          <AccountSummary routes={routes} account={account} roles={roles} />
          <Tokens routes={routes} account={account} />
          <EditAccount routes={routes} account={account} roles={roles} />
          <Activation routes={routes} account={account} />
          <DeleteAccount routes={routes} account={account} />
        </>
      )}
    </Show>
  );
}

function AccountSummary({ routes, account, roles }: { routes: AccountRoutes; account: ServiceAccount; roles: Role[] }) {
  return (
    <Section title={`Service account ${account.name}`}>
      <dl>
        <dt>Description</dt>
        <dd>{account.description || '—'}</dd>
        {routes.org ? (
          <>
            <dt>Custom roles</dt>
            <dd>{roleNames(account.roles, roles)}</dd>
          </>
        ) : (
          <>
            <dt>Site admin</dt>
            <dd>{account.site_admin ? 'yes' : 'no'}</dd>
          </>
        )}
        <dt>Kubernetes subjects</dt>
        <dd>{subjects(account)}</dd>
        <dt>Status</dt>
        <dd>{account.active ? 'Active' : 'Inactive: it authenticates nobody'}</dd>
        <dt>Created</dt>
        <dd>{created(account)}</dd>
      </dl>
    </Section>
  );
}

function EditAccount({ routes, account, roles }: { routes: AccountRoutes; account: ServiceAccount; roles: Role[] }) {
  const action = useAction();
  const editing = useEditAccount(routes);
  return (
    <Section title="Edit service account">
      <Form
        action={action}
        label={`Edit service account ${account.name}`}
        submitLabel="Save service account"
        validate={accountProblem}
        submit={async (data) => {
          const saved = await editing.mutateAsync({ id: account.id, fields: accountBody(data, routes) });
          return `Saved service account ${saved.name}.`;
        }}
      >
        {/* New fields after a save, so they show what the API now holds (the form itself keeps its outcome). */}
        <AccountFieldset key={JSON.stringify(account)} routes={routes} roles={roles} account={account} />
      </Form>
    </Section>
  );
}

/** Deactivating keeps the account and its tokens but refuses them all at once; activating lets them in again. */
function Activation({ routes, account }: { routes: AccountRoutes; account: ServiceAccount }) {
  const action = useAction();
  const editing = useEditAccount(routes);
  const set = (active: boolean) =>
    action.run(async () => {
      await editing.mutateAsync({ id: account.id, fields: { active } });
      return active ? `Activated ${account.name}: its tokens work again.` : `Deactivated ${account.name}: its tokens are refused until it is activated.`;
    });
  return (
    <Section title={account.active ? 'Deactivate' : 'Activate'}>
      {account.active ? (
        <>
          <p className="muted">Its tokens and Kubernetes subjects are refused from the next request on; they are kept, and work again once it is activated.</p>
          <button type="button" className="danger" disabled={action.busy} onClick={() => void set(false)}>
            Deactivate {account.name}
          </button>
        </>
      ) : (
        <>
          <p className="muted">It is inactive: it authenticates nobody. Activated, its tokens and Kubernetes subjects work again.</p>
          <button type="button" disabled={action.busy} onClick={() => void set(true)}>
            Activate {account.name}
          </button>
        </>
      )}
      <Outcome action={action} />
    </Section>
  );
}

function DeleteAccount({ routes, account }: { routes: AccountRoutes; account: ServiceAccount }) {
  const action = useAction();
  const deletion = useDeleteAccount(routes);
  const navigate = useNavigate();
  return (
    <Section title="Delete service account">
      <p className="muted">Its tokens go with it, refused from the next request on; its name is free again.</p>
      <ConfirmButton
        label={`Delete ${account.name}`}
        confirmLabel={`Confirm delete ${account.name}`}
        busy={action.busy}
        onConfirm={() =>
          void action.run(async () => {
            await deletion.mutateAsync(account.id);
            void navigate(routes.base);
          })
        }
      />
      <Outcome action={action} />
    </Section>
  );
}
