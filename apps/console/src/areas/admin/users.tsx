import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { useUser } from '../../session';
import { ErrorMessage, Section, Table, instant, isNever, when } from '../../ui';
import { ConfirmButton } from '../../ui/controls';
import { useExistingPage } from '../../ui/paging';
import { Pager } from '../orgs/paging';
import {
  adminKeys,
  fetchUsers,
  lastOwnerOf,
  useDeleteUser,
  useLiftLockout,
  useResendVerification,
  useResetTwoFactor,
  useRevokeCredentials,
  type User,
} from './admin-users-api';
import { CreateUserForm, EditUserForm } from './user-form';

// Users, for site admins (docs/authentication.md, "Managing users"): the search and page live in the address
// (`?q=&page=`), so a result can be linked to and the browser's back button returns to it.

const PAGE_SIZE = 20;

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** `/admin/users` as the signed-in site admin. */
export default function Users() {
  return <UserAdmin self={useUser().login} />;
}

/** The users screen; `self` is the caller's login, whose account offers nothing the API refuses one's own. */
export function UserAdmin({ self }: { self: string }) {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const page = Math.max(1, Math.trunc(Number(params.get('page'))) || 1);
  const query = { q, page, limit: PAGE_SIZE };
  const users = useQuery({ queryKey: adminKeys.userPage(query), queryFn: () => fetchUsers(query), placeholderData: keepPreviousData });
  useExistingPage(page, users.isPlaceholderData ? undefined : users.data?.total, PAGE_SIZE);
  const [editing, setEditing] = useState<string>();
  const lift = useLiftLockout();
  const remove = useDeleteUser();
  const revoke = useRevokeCredentials();
  const resetTwoFactor = useResetTwoFactor();
  const resend = useResendVerification();
  const [outcome, setOutcome] = useState<string>();
  // The user whose deletion was refused because they alone own organizations; purge is offered for those.
  const [refused, setRefused] = useState<{ login: string; orgs: string[] }>();

  const search = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const typed = String(new FormData(e.currentTarget).get('q') ?? '').trim();
    setParams(typed ? { q: typed } : {});
  };
  const goTo = (next: number) => setParams({ ...(q && { q }), ...(next > 1 && { page: String(next) }) });
  const clearOutcome = () => {
    setOutcome(undefined);
    setRefused(undefined);
    lift.reset();
    remove.reset();
    revoke.reset();
    resetTwoFactor.reset();
    resend.reset();
  };
  const resendMail = (user: User) => {
    clearOutcome();
    resend.mutate(user.login, { onSuccess: () => setOutcome(`Mailed ${user.login} a new link verifying ${user.email}.`) });
  };
  const revokeAll = (login: string) => {
    clearOutcome();
    revoke.mutate(login, {
      onSuccess: (r) => setOutcome(`Revoked ${r.tokens} access tokens and ${r.sessions} sessions of ${login}.`),
    });
  };
  const resetFactor = (login: string) => {
    clearOutcome();
    resetTwoFactor.mutate(login, { onSuccess: () => setOutcome(`Reset the two-factor authentication of ${login}.`) });
  };
  const liftLockout = (user: User) => {
    clearOutcome();
    lift.mutate(user.login, { onSuccess: () => setOutcome(`Lifted the sign-in lockout of ${user.login}.`) });
  };
  const deleteUser = (login: string, purge: boolean) => {
    clearOutcome();
    remove.mutate(
      { username: login, purge },
      {
        onSuccess: () => {
          if (editing && same(editing, login)) setEditing(undefined);
          setOutcome(purge ? `Deleted user ${login} and the organizations they alone owned.` : `Deleted user ${login}.`);
        },
        onError: (error) => {
          const orgs = lastOwnerOf(error);
          if (orgs && !purge) setRefused({ login, orgs });
        },
      },
    );
  };

  const current = users.data?.items.find((u) => editing && same(u.login, editing));
  return (
    <>
      <h1>Users</h1>
      <Section title="Users">
        <form role="search" aria-label="Search users" className="form" onSubmit={search}>
          <div className="field">
            <label htmlFor="user-search">Login or email</label>
            <input id="user-search" name="q" type="search" defaultValue={q} key={q} />
          </div>
          <button type="submit">Search</button>
          {q && (
            <button type="button" onClick={() => setParams({})}>
              Show all
            </button>
          )}
        </form>
        {users.error ? (
          <ErrorMessage error={users.error} />
        ) : !users.data ? (
          <p aria-busy="true">Loading…</p>
        ) : (
          <>
            <Table<User>
              caption={q ? `Users matching “${q}” (${users.data.total})` : `Users (${users.data.total})`}
              rows={users.data.items}
              rowKey={(u) => u.id}
              pageSize={PAGE_SIZE}
              empty={q ? 'no user matches.' : 'none.'}
              columns={[
                {
                  header: 'Login',
                  cell: (u) => (
                    <>
                      <strong>{u.login}</strong>
                      {u.full_name && <div className="muted">{u.full_name}</div>}
                    </>
                  ),
                },
                { header: 'Email', cell: (u) => u.email || '—' },
                {
                  header: 'Verified',
                  cell: (u) => (u.email_verified === false ? <span className="tag">not verified</span> : u.email_verified ? 'verified' : '—'),
                },
                { header: 'Rights', cell: (u) => (u.is_admin ? <span className="tag">site admin</span> : 'user') },
                { header: 'Status', cell: (u) => <Status user={u} />, value: (u) => (u.active ? 'active' : 'inactive') + (u.prohibit_login ? ', sign-in prohibited' : '') },
                { header: 'Last sign-in', cell: (u) => (isNever(u.last_login) ? 'never' : when(u.last_login)), value: (u) => instant(u.last_login) },
                { header: 'Created', cell: (u) => when(u.created), value: (u) => instant(u.created) },
                {
                  header: 'Actions',
                  cell: (u) => (
                    <>
                      <button type="button" aria-label={`Edit ${u.login}`} onClick={() => setEditing(u.login)}>
                        Edit
                      </button>{' '}
                      {u.email_verified === false && (
                        <>
                          <button
                            type="button"
                            aria-label={`Resend verification mail to ${u.login}`}
                            onClick={() => resendMail(u)}
                            disabled={resend.isPending}
                          >
                            Resend verification
                          </button>{' '}
                        </>
                      )}
                      {u.sign_in_locked_until && (
                        <>
                          <button
                            type="button"
                            aria-label={`Lift lockout of ${u.login}`}
                            onClick={() => liftLockout(u)}
                            disabled={lift.isPending}
                          >
                            Lift lockout
                          </button>{' '}
                        </>
                      )}
                      <ConfirmButton
                        label={`Revoke tokens and sessions of ${u.login}`}
                        confirmLabel={`Confirm revoke all of ${u.login}`}
                        busy={revoke.isPending}
                        onConfirm={() => revokeAll(u.login)}
                      />{' '}
                      <ConfirmButton
                        label={`Reset two-factor of ${u.login}`}
                        confirmLabel={`Confirm reset two-factor of ${u.login}`}
                        busy={resetTwoFactor.isPending}
                        onConfirm={() => resetFactor(u.login)}
                      />{' '}
                      {/* One's own account cannot be deleted here: the API refuses it (another site admin can). */}
                      {!same(u.login, self) && (
                        <ConfirmButton
                          label={`Delete ${u.login}`}
                          confirmLabel={`Confirm delete ${u.login}`}
                          busy={remove.isPending}
                          onConfirm={() => deleteUser(u.login, false)}
                        />
                      )}
                    </>
                  ),
                },
              ]}
            />
            <Pager label="Users" page={page} limit={PAGE_SIZE} total={users.data.total} onPage={goTo} />
          </>
        )}
        {refused ? (
          <div role="alert" className="panel">
            <p className="error">
              {refused.login} is the last owner of {refused.orgs.join(', ')}. Give each organization another owner first, or delete{' '}
              {refused.orgs.length === 1 ? 'it' : 'them'} with the user.
            </p>
            <ConfirmButton
              label={`Also delete ${refused.orgs.join(', ')}`}
              confirmLabel={`Confirm delete ${refused.login} and ${refused.orgs.join(', ')}`}
              busy={remove.isPending}
              onConfirm={() => deleteUser(refused.login, true)}
            />{' '}
            <button type="button" onClick={clearOutcome}>
              Keep {refused.login}
            </button>
          </div>
        ) : (
          <ErrorMessage error={remove.error} />
        )}
        <ErrorMessage error={lift.error ?? resend.error} />
        <ErrorMessage error={revoke.error ?? resetTwoFactor.error} />
        {outcome && (
          <p role="status" className="done">
            {outcome}
          </p>
        )}
      </Section>
      {current && (
        <Section title={`Edit user ${current.login}`}>
          <EditUserForm key={current.login} user={current} self={same(current.login, self)} onClose={() => setEditing(undefined)} />
        </Section>
      )}
      <Section title="New user">
        <CreateUserForm />
      </Section>
    </>
  );
}

function Status({ user }: { user: User }) {
  const parts = [user.active ? 'active' : 'inactive', ...(user.prohibit_login ? ['sign-in prohibited'] : [])];
  return (
    <>
      <span className={user.active && !user.prohibit_login ? undefined : 'error'}>{parts.join(', ')}</span>
      {user.sign_in_locked_until && <div className="error">locked until {when(user.sign_in_locked_until)}</div>}
    </>
  );
}
