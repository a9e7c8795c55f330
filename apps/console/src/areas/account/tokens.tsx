import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok, type Schema } from '../../api/client';
import { basicAuthorization, useUser } from '../../session';
import { ConfirmButton } from '../../ui/controls';
import { ErrorMessage, Field, Form, missing, Section, Show, Table, useAction, instant, isNever, when } from '../../ui';

type Token = Schema<'AccessToken'>;

/** The scopes a token may be given (docs/authentication.md, "Token scopes"); none chosen makes a token of every scope. */
export const SCOPE_CHOICES = ['organization', 'user', 'admin', 'misc'].flatMap((c) => [`read:${c}`, `write:${c}`]);

/**
 * The user's personal access tokens. Their routes take HTTP Basic credentials only (a token or a session cookie never
 * mints or lists tokens), so the page asks for the password first and keeps it in memory while it is open.
 */
export function AccountTokens() {
  const user = useUser();
  const [password, setPassword] = useState<string>();
  const unlock = useAction();
  const client = useQueryClient();
  const headers = password ? { authorization: basicAuthorization(user.login, password) } : undefined;
  const path = { username: user.login };
  const tokens = useQuery({
    queryKey: ['account', 'tokens'],
    // The list is paged, as Gitea's: every page, 50 at a time.
    queryFn: async () => {
      const all: Token[] = [];
      for (let page = 1; ; page += 1) {
        const some = await ok(api.GET('/users/{username}/tokens', { params: { path, query: { page, limit: 50 } }, headers }));
        all.push(...some);
        if (some.length < 50) return all;
      }
    },
    enabled: password !== undefined,
  });
  const [minted, setMinted] = useState<Token>();
  const create = useMutation({
    mutationFn: (body: { name: string; scopes: string[] }) => ok(api.POST('/users/{username}/tokens', { params: { path }, headers, body })),
    onSuccess: (token) => {
      setMinted(token);
      void client.invalidateQueries({ queryKey: ['account', 'tokens'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: number) => ok(api.DELETE('/users/{username}/tokens/{id}', { params: { path: { ...path, id: String(id) } }, headers })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['account', 'tokens'] }),
  });
  const createAction = useAction();

  if (password === undefined)
    return (
      <Section title="Access tokens">
        <Form
          label="Show your access tokens"
          submitLabel="Show tokens"
          action={unlock}
          validate={(d) => missing(d, ['password', 'Password'])}
          submit={async (d) => {
            const given = String(d.get('password'));
            // Asked once here, so a wrong password is told at once rather than as a failed list.
            await ok(api.GET('/users/{username}/tokens', { params: { path }, headers: { authorization: basicAuthorization(user.login, given) } }));
            setPassword(given);
          }}
        >
          <Field label="Password" name="password" type="password" required autoComplete="current-password" hint="Access tokens are managed with your password." />
        </Form>
      </Section>
    );
  return (
    <Section title="Access tokens">
      {minted && (
        <div className="new-secret" role="region" aria-label={`New token ${minted.name}`}>
          <p>
            <strong>Copy the token now: you will not see it again.</strong>
          </p>
          <input className="secret" readOnly aria-label={`Token ${minted.name}`} value={minted.sha1} size={42} onFocus={(e) => e.currentTarget.select()} />{' '}
          <button type="button" onClick={() => setMinted(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <Show loaded={tokens}>
        {(rows) => (
          <Table
            caption="Your access tokens"
            rows={rows}
            rowKey={(t) => t.id}
            columns={[
              { header: 'Name', cell: (t) => t.name },
              { header: 'Ends with', cell: (t) => <code>{t.token_last_eight}</code> },
              { header: 'Scopes', cell: (t) => t.scopes.join(', ') },
              { header: 'Created', cell: (t) => when(t.created_at), value: (t) => instant(t.created_at) },
              { header: 'Last used', cell: (t) => (isNever(t.last_used_at) ? 'never' : when(t.last_used_at)) },
              {
                header: 'Actions',
                cell: (t) => (
                  <ConfirmButton label={`Delete ${t.name}`} confirmLabel={`Confirm delete ${t.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(t.id)} />
                ),
              },
            ]}
          />
        )}
      </Show>
      <ErrorMessage error={remove.error} />
      <Form
        label="Create an access token"
        submitLabel="Create token"
        action={createAction}
        validate={(d) => missing(d, ['name', 'Token name'])}
        submit={async (d) => {
          await create.mutateAsync({ name: String(d.get('name')).trim(), scopes: d.getAll('scope').map(String) });
        }}
      >
        <Field label="Token name" name="name" required autoComplete="off" hint="Unique among your tokens" />
        <fieldset className="field">
          <legend>Scopes (none: every scope)</legend>
          {SCOPE_CHOICES.map((scope) => (
            <label key={scope}>
              <input type="checkbox" name="scope" value={scope} /> {scope}
            </label>
          ))}
        </fieldset>
      </Form>
    </Section>
  );
}
