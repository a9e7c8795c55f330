import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { api, ok } from '../../api/client';
import { ErrorMessage, Section } from '../../ui';
import { ConfirmButton } from '../../ui/controls';

// The account's e-mail address and whether it is verified, and its link to the site's identity provider
// (docs/authentication.md, "Verified e-mail addresses" and "Single sign-on (OIDC)").

/** The address, its state, and while it is unverified a banner with the way to a new mail. */
export function AccountEmail() {
  const me = useQuery({ queryKey: ['account', 'me'], queryFn: () => ok(api.GET('/user')) });
  const resend = useMutation({ mutationFn: () => ok(api.POST('/user/verification-mail', { body: {} })) });
  if (!me.data) return <ErrorMessage error={me.error} />;
  const { email, email_verified: verified } = me.data;
  return (
    <Section title="E-mail address">
      <p>
        {email} {verified === true && <span className="tag">verified</span>}
      </p>
      {verified === false && (
        <div role="alert" className="banner">
          <p>
            Your e-mail address is not verified yet: open the link we mailed to {email}. Until then single sign-on does not
            link to this account{' '}
            and, where the site admits people by their e-mail domain, you cannot sign in with your password.
          </p>
          {resend.isSuccess ? (
            <p role="status">A new link is on its way; the previous one no longer works.</p>
          ) : (
            <button type="button" onClick={() => resend.mutate()} disabled={resend.isPending}>
              Send the mail again
            </button>
          )}
          <ErrorMessage error={resend.error} />
        </div>
      )}
    </Section>
  );
}

/** The provider account linked to this one, with the ways to link one (the provider's flow) and to unlink it. */
export function AccountProviderLink() {
  const client = useQueryClient();
  const [params] = useSearchParams();
  const methods = useQuery({ queryKey: ['sign-in-methods'], queryFn: () => ok(api.GET('/sign-in/methods')) }).data;
  const sso = methods?.oidc ?? undefined;
  const links = useQuery({ queryKey: ['account', 'provider-links'], queryFn: () => ok(api.GET('/user/oidc/links')), enabled: !!sso });
  const unlink = useMutation({
    mutationFn: (issuer: string) => ok(api.DELETE('/user/oidc/links', { params: { query: { issuer } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['account', 'provider-links'] }),
  });
  if (!sso) return null;
  const linked = links.data?.[0];
  return (
    <Section title="Single sign-on">
      {params.get('linked') === '1' && linked && !unlink.isSuccess && <p role="status">Your {sso.name} account is linked.</p>}
      {links.data === undefined ? (
        <ErrorMessage error={links.error} />
      ) : linked ? (
        <>
          <p>
            Linked to your {sso.name} account <code>{linked.subject}</code> (since {new Date(linked.created_at).toLocaleDateString()}): signing in
            with {sso.name} reaches this account.
          </p>
          <ConfirmButton
            label={`Unlink ${sso.name}`}
            confirmLabel={`Confirm unlink ${sso.name}`}
            busy={unlink.isPending}
            onConfirm={() => unlink.mutate(linked.issuer)}
          />
        </>
      ) : (
        <p>
          Not linked. {/* A plain link: the start is a redirect to the provider, not a console screen. */}
          <a href="/api/v1/user/oidc/link/start">Link your {sso.name} account</a>: you sign in there, and signing in with{' '}
          {sso.name} reaches this account from then on.
        </p>
      )}
      <ErrorMessage error={unlink.error} />
    </Section>
  );
}
