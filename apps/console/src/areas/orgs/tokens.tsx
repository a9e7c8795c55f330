import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError, type Schema } from '../../api/client';
import type { Loaded } from '../../ui/data';
import { Outcome, Section, Show, Table, useAction, instant, when } from '../../ui';
import { OrgNav } from '../../ui/org-nav';
import { fetchAccessTokens, fetchBusTokens, orgKeys, useDeleteAccessToken, useOrgAllowed, useRevokeBusToken } from './api';
import { useOrgName } from './org-data';

/**
 * `/orgs/:org/tokens`: the machine credentials of the organization's system admin (docs/organization-tokens.md):
 * its message-bus accounts, to revoke, and its access tokens, to delete. Until the organization has a machine
 * credential there is no system admin, and the API says so (400).
 */
export function Tokens() {
  const org = useOrgName();
  return (
    <>
      <OrgNav org={org} />
      <BusTokens org={org} />
      <AccessTokens org={org} />
    </>
  );
}

/**
 * A token list, or, when the organization has no system admin yet (the lists' only 400), that state explained:
 * it is where every organization starts, not a failure.
 */
function TokenList<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ReactNode }) {
  if (loaded.error instanceof ApiError && loaded.error.status === 400)
    return (
      <p className="muted">
        None: {loaded.error.message}. It gets one with its first machine credential (a cluster enrollment's bus account, or a manager sync
        token).
      </p>
    );
  return <Show loaded={loaded}>{children}</Show>;
}

function BusTokens({ org }: { org: string }) {
  const tokens = useQuery({ queryKey: orgKeys.busTokens(org), queryFn: () => fetchBusTokens(org) });
  const action = useAction();
  const revocation = useRevokeBusToken(org);
  const mayRevoke = useOrgAllowed(org)('revoke_bus_token');
  const revoke = (t: Schema<'BusAccount'>) =>
    action.run(async () => {
      await revocation.mutateAsync(t.id);
      return `Revoked bus token ${t.id}.`;
    });
  return (
    <Section title="Bus tokens">
      <TokenList loaded={tokens}>
        {(list) => (
          <Table
            caption={`Message-bus tokens of ${org}`}
            rows={list}
            rowKey={(t) => t.id}
            columns={[
              { header: 'ID', cell: (t) => t.id },
              { header: 'Public key', cell: (t) => <code>{t.busPubKey}</code> },
              { header: 'Cluster', cell: (t) => (t.clusterID ? <code>{t.clusterID}</code> : '—') },
              { header: 'Product', cell: (t) => t.productName || '—' },
              { header: 'Status', cell: (t) => (t.revoked ? 'Revoked' : 'Active') },
              {
                header: 'Actions',
                cell: (t) =>
                  t.revoked || !mayRevoke ? (
                    '—'
                  ) : (
                    <button type="button" className="danger" disabled={action.busy} onClick={() => void revoke(t)}>
                      Revoke bus token {t.id}
                    </button>
                  ),
              },
            ]}
          />
        )}
      </TokenList>
      <Outcome action={action} />
    </Section>
  );
}

function AccessTokens({ org }: { org: string }) {
  const tokens = useQuery({ queryKey: orgKeys.accessTokens(org), queryFn: () => fetchAccessTokens(org) });
  const action = useAction();
  const deletion = useDeleteAccessToken(org);
  const mayDelete = useOrgAllowed(org)('delete_access_token');
  const remove = (t: Schema<'AccessTokenInfo'>) =>
    action.run(async () => {
      await deletion.mutateAsync(t.id);
      return `Deleted access token ${t.name}.`;
    });
  return (
    <Section title="Access tokens">
      <TokenList loaded={tokens}>
        {(list) => (
          <Table
            caption={`Access tokens of ${org}'s system admin`}
            rows={list}
            rowKey={(t) => t.id}
            columns={[
              { header: 'Name', cell: (t) => t.name },
              { header: 'Ends with', cell: (t) => <code>…{t.tokenLastEight}</code> },
              { header: 'Created', cell: (t) => when(t.createdAt), value: (t) => instant(t.createdAt) },
              { header: 'Used', cell: (t) => (t.hasRecentActivity ? 'in the last 7 days' : t.hasUsed ? 'earlier' : 'never') },
              { header: 'Expires', cell: (t) => (t.expDate ? when(t.expDate) : 'never') },
              {
                header: 'Actions',
                cell: (t) =>
                  mayDelete ? (
                    <button type="button" className="danger" disabled={action.busy} onClick={() => void remove(t)}>
                      Delete access token {t.name}
                    </button>
                  ) : (
                    '—'
                  ),
              },
            ]}
          />
        )}
      </TokenList>
      <Outcome action={action} />
    </Section>
  );
}
