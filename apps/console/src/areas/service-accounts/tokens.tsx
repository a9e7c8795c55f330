import { useId, useState } from 'react';
import { Field, Form, Outcome, Section, Show, Table, useAction, instant, isNever, when } from '../../ui';
import { ConfirmButton } from '../../ui/controls';
import { useAccountTokens, useCreateToken, useRevokeToken, type AccountRoutes, type NewToken, type ServiceAccount, type Token } from './accounts-api';

const MAX_TOKEN_NAME = 255;

/**
 * An account's tokens: listed with their last eight characters and last use (never their secrets), minted (the
 * secret shown once, as the API answers it only then), revoked (refused from the very next request).
 */
export function Tokens({ routes, account }: { routes: AccountRoutes; account: ServiceAccount }) {
  const { id } = account;
  const tokens = useAccountTokens(routes, id);
  const minting = useCreateToken(routes);
  const revocation = useRevokeToken(routes);
  const create = useAction();
  const revoke = useAction();
  const [minted, setMinted] = useState<NewToken>();
  const revokeToken = (t: Token) =>
    revoke.run(async () => {
      await revocation.mutateAsync({ id, tokenId: t.id });
      if (minted?.id === t.id) setMinted(undefined);
      return `Revoked token ${t.name}: it is refused from now on.`;
    });
  return (
    <Section title="Tokens">
      {minted && <NewSecret token={minted} onDone={() => setMinted(undefined)} />}
      <Show loaded={tokens}>
        {(list) => (
          <Table
            caption={`Tokens of ${account.name}`}
            rows={list}
            rowKey={(t) => t.id}
            empty="none yet; create one below."
            columns={[
              { header: 'Name', cell: (t) => t.name },
              { header: 'Ends with', cell: (t) => <code>…{t.token_last_eight}</code> },
              { header: 'Created', cell: (t) => when(t.created_at), value: (t) => instant(t.created_at) },
              { header: 'Last used', cell: (t) => (isNever(t.last_used_at) ? 'never' : when(t.last_used_at)) },
              {
                header: 'Actions',
                cell: (t) => (
                  <ConfirmButton label={`Revoke ${t.name}`} confirmLabel={`Confirm revoke ${t.name}`} busy={revoke.busy} onConfirm={() => void revokeToken(t)} />
                ),
              },
            ]}
          />
        )}
      </Show>
      <Outcome action={revoke} />
      <h3>New token</h3>
      <Form
        action={create}
        label={`New token of ${account.name}`}
        submitLabel="Create token"
        validate={(data) => {
          const name = String(data.get('name') ?? '').trim();
          if (!name) return 'Token name is required';
          if (name.length > MAX_TOKEN_NAME) return `Token name: at most ${MAX_TOKEN_NAME} characters`;
        }}
        submit={async (data) => {
          setMinted(await minting.mutateAsync({ id, name: String(data.get('name')).trim() }));
        }}
      >
        <Field label="Token name" name="name" required hint="What will use it, e.g. the pipeline's name; unique for the account" autoComplete="off" />
      </Form>
    </Section>
  );
}

/**
 * A token just minted, with its secret, above the list: the API answers it once and keeps only its hash, so this is
 * the one chance to copy it. It goes when the person says they have it, or leaves the page.
 */
function NewSecret({ token, onDone }: { token: NewToken; onDone: () => void }) {
  const id = useId();
  const copy = useAction();
  return (
    <div className="new-secret" role="region" aria-label={`New token ${token.name}`}>
      <p>
        <strong>Copy the token now: you will not see it again.</strong> The platform keeps only its hash; if it is lost, create
        another and revoke this one.
      </p>
      <div className="form">
        <div className="field">
          <label htmlFor={id}>Token {token.name}</label>
          {/* Focused (and so scrolled to, and read out) as it appears, selected for copying by hand. */}
          <input id={id} className="secret" readOnly autoFocus value={token.sha1} size={42} onFocus={(e) => e.currentTarget.select()} />
        </div>
        <button
          type="button"
          className="primary"
          disabled={copy.busy}
          onClick={() =>
            void copy.run(async () => {
              try {
                await navigator.clipboard.writeText(token.sha1);
              } catch {
                // Browsers offer the clipboard to secure pages only (HTTPS or localhost), and may refuse it anyway.
                throw new Error('The browser did not let the console copy: select the token and copy it yourself.');
              }
              return 'Copied to the clipboard.';
            })
          }
        >
          Copy token
        </button>
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
      </div>
      <Outcome action={copy} />
      <p className="muted">
        Services present it as <code>Authorization: Bearer &lt;token&gt;</code>, over REST and gRPC.
      </p>
    </div>
  );
}
