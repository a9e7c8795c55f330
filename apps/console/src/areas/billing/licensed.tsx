import type { ReactNode } from 'react';
import { api, ok, type Schema } from '../../api/client';
import { Section, Show, Table, instant, when, type Column } from '../../ui';
import { useReport } from './api';
import { Choice } from './choice';
import { ActivityWindow, BillingLink, Facts, textOf, Trailed, trailPath, useWindow, type Trail } from './licensed-common';
import { useQuery } from './query';

type LicensedUser = Schema<'LicensedUserAPIForm'>;

/** The three lists of licensed users the API keeps (docs/billing-dashboard.md, "What active and inactive mean"). */
const USER_LISTS = [
  ['all', 'Every account that reported a licensed product'],
  ['active', 'Accounts active in the activity window'],
  ['inactive', 'User accounts that never reported one'],
] as const;
type UserList = (typeof USER_LISTS)[number][0];

function loadUsers(org: string, list: UserList, limit: string): Promise<LicensedUser[]> {
  if (list === 'active') return ok(api.GET('/dashboard/users/active', { params: { query: { org, limit } } }));
  if (list === 'inactive') return ok(api.GET('/dashboard/users/inactive', { params: { query: { org } } }));
  return ok(api.GET('/dashboard/users/', { params: { query: { org } } }));
}

/** Licensed users (`/admin/billing/licensed`): every account that reported, the active ones, the inactive ones. */
export function LicensedUsersScreen({ org }: { org: string }) {
  const [params, change] = useQuery();
  const list = USER_LISTS.find(([l]) => l === params.get('users'))?.[0] ?? 'all';
  const limit = useWindow();
  const users = useReport(['users', org, list, limit], () => loadUsers(org, list, limit));
  const columns: Column<LicensedUser>[] = [
    {
      header: 'Account',
      // An account that never reported has no clusters to show.
      cell: (u) =>
        u.lastReceivedAt > 0 ? (
          <BillingLink to={trailPath({ uid: u.userID })}>{u.username || `Account ${u.userID}`}</BillingLink>
        ) : (
          u.username
        ),
    },
    { header: 'Type', cell: (u) => u.userType || 'deleted account' },
    { header: 'Email', cell: (u) => u.email },
    { header: 'User ID', cell: (u) => u.userID },
    { header: 'Last report', cell: (u) => when(u.lastReceivedAt), value: (u) => instant(u.lastReceivedAt) },
  ];
  const caption = list === 'active' ? `Accounts active in the window ${limit}` : (USER_LISTS.find(([l]) => l === list)?.[1] ?? '');
  return (
    <Section title="Licensed users">
      <div className="form">
        <Choice label="Show" value={list} options={USER_LISTS} onChange={(l) => change({ users: l === 'all' ? undefined : l })} />
      </div>
      {list === 'active' && <ActivityWindow />}
      <Show loaded={users}>{(rows) => <Table caption={caption} columns={columns} rows={rows} rowKey={(u) => u.userID} />}</Show>
    </Section>
  );
}

/** A licensed user's clusters (`/admin/billing/licensed/users/:uid`): every one, and those active in the window. */
export function UserScreen({ org }: { org: string }) {
  return <Trailed org={org}>{(trail) => <UserClusters org={org} uid={trail.uid} />}</Trailed>;
}

function UserClusters({ org, uid }: { org: string; uid: number }) {
  const limit = useWindow();
  const path = { uid };
  const clusters = useReport(['clusters', org, uid], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/', { params: { path, query: { org } } })),
  );
  const active = useReport(['active', org, uid, limit], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/active', { params: { path, query: { org, limit } } })),
  );
  const nameOf = (cid: string) => clusters.data?.find((c) => c.uid === cid)?.name || cid;
  const clusterLink = (cid: string, name: string) => <BillingLink to={trailPath({ uid, cid })}>{name}</BillingLink>;
  return (
    <>
      <Section title="Clusters">
        <Show loaded={clusters}>
          {(rows) => (
            <Table
              caption={`Clusters user ${uid}'s licensed products ran on, latest report first`}
              rows={rows}
              rowKey={(c) => c.uid}
              columns={[
                { header: 'Cluster', cell: (c) => clusterLink(c.uid, c.name || c.uid) },
                { header: 'Display name', cell: (c) => c.displayName },
                { header: 'UID', cell: (c) => <code>{c.uid}</code> },
                { header: 'Owner', cell: (c) => c.ownerName || (c.id === 0 ? 'not in the inventory' : '') },
                { header: 'Provider', cell: (c) => c.provider },
                { header: 'Kubernetes', cell: (c) => c.kubernetesVersion },
                { header: 'Nodes', cell: (c) => c.nodeCount },
                { header: 'Status', cell: (c) => textOf(c.status, 'phase') },
                { header: 'Recorded', cell: (c) => when(c.createdAt), value: (c) => instant(c.createdAt) },
              ]}
            />
          )}
        </Show>
      </Section>
      <Section title="Active clusters">
        <ActivityWindow />
        <Show loaded={active}>
          {(rows) => (
            <Table
              caption={`Clusters user ${uid} reported from in the window ${limit}`}
              rows={rows}
              rowKey={(c) => c.clusterID}
              columns={[
                { header: 'Cluster', cell: (c) => clusterLink(c.clusterID, nameOf(c.clusterID)) },
                { header: 'First report', cell: (c) => when(c.firstReceivedAt), value: (c) => instant(c.firstReceivedAt) },
                { header: 'Last report', cell: (c) => when(c.lastReceivedAt), value: (c) => instant(c.lastReceivedAt) },
                { header: 'Active contracts binding it', cell: (c) => c.noOfAssociatedContracts },
              ]}
            />
          )}
        </Show>
      </Section>
    </>
  );
}

type ActiveLicense = Schema<'ActiveLicenseAPIForm'>;

function activeLicenseColumns(link: (l: ActiveLicense) => ReactNode): Column<ActiveLicense>[] {
  return [
    { header: 'License', cell: link },
    { header: 'Account', cell: (l) => `${l.username || 'deleted account'} (${l.userId})` },
    { header: 'Email', cell: (l) => l.email },
    { header: 'First report', cell: (l) => when(l.firstReceivedAt), value: (l) => instant(l.firstReceivedAt) },
    { header: 'Last report', cell: (l) => when(l.lastReceivedAt), value: (l) => instant(l.lastReceivedAt) },
  ];
}

/**
 * One of a user's clusters (`.../users/:uid/clusters/:cid`): the cluster as the inventory has it, the licenses
 * the user reported there (all, and active in the window) and every user's licenses active on the cluster.
 */
export function ClusterScreen({ org }: { org: string }) {
  return <Trailed org={org}>{(trail) => trail.cid && <ClusterLicenses org={org} uid={trail.uid} cid={trail.cid} />}</Trailed>;
}

function ClusterLicenses({ org, uid, cid }: { org: string; uid: number; cid: string }) {
  const limit = useWindow();
  const path = { uid, cid };
  const cluster = useReport(['cluster', org, uid, cid], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/{cid}', { params: { path, query: { org } } })),
  );
  const licenses = useReport(['licenses', org, uid, cid], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/', { params: { path, query: { org } } })),
  );
  const active = useReport(['active', org, uid, cid, limit], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/active', { params: { path, query: { org, limit } } })),
  );
  const everyone = useReport(['everyone', org, cid, limit], () =>
    ok(api.GET('/dashboard/clusters/{cid}/licenses/active', { params: { path: { cid }, query: { org, limit } } })),
  );
  const licenseLink = (lid: string) => (
    <BillingLink to={trailPath({ uid, cid, lid })}>
      <code>{lid}</code>
    </BillingLink>
  );
  return (
    <>
      <Section title="Cluster">
        <Show loaded={cluster}>
          {(c) => (
            <Facts
              label={`Cluster ${c.name || c.uid}`}
              facts={[
                ['Name', c.name],
                ['Display name', c.displayName],
                ['UID', <code key="uid">{c.uid}</code>],
                ['Owner', c.ownerName || (c.id === 0 ? 'not in the inventory' : '')],
                ['Provider', c.provider],
                ['Kubernetes version', c.kubernetesVersion],
                ['Nodes', c.nodeCount],
                ['Status', textOf(c.status, 'phase')],
                ['Region', textOf(c.status, 'region')],
                [c.id === 0 ? 'First report' : 'Recorded', when(c.createdAt)],
              ]}
            />
          )}
        </Show>
      </Section>
      <Section title="Licenses">
        <Show loaded={licenses}>
          {(rows) => (
            <Table
              caption={`Licenses user ${uid} reported on this cluster, latest report first`}
              rows={rows}
              rowKey={(l) => l.licenseID}
              columns={[
                { header: 'License', cell: (l) => licenseLink(l.licenseID) },
                { header: 'Plan', cell: (l) => l.planName || 'not issued by the platform' },
                { header: 'Email', cell: (l) => l.email },
                { header: 'Valid', cell: (l) => (l.notAfter ? `${when(l.notBefore)} – ${when(l.notAfter)}` : '—') },
                { header: 'Registered', cell: (l) => when(l.registeredAt), value: (l) => instant(l.registeredAt) },
                { header: 'Updated', cell: (l) => when(l.updatedAt), value: (l) => instant(l.updatedAt) },
              ]}
            />
          )}
        </Show>
      </Section>
      <Section title="Active licenses">
        <ActivityWindow />
        <Show loaded={active}>
          {(rows) => (
            <Table
              caption={`Licenses user ${uid} reported on this cluster in the window ${limit}`}
              rows={rows}
              rowKey={(l) => l.licenseID}
              columns={activeLicenseColumns((l) => licenseLink(l.licenseID))}
            />
          )}
        </Show>
        <Show loaded={everyone}>
          {(rows) => (
            <Table
              caption={`Every user's licenses reported on this cluster in the window ${limit}`}
              rows={rows}
              rowKey={(l) => `${l.userId}/${l.licenseID}`}
              columns={activeLicenseColumns((l) => (
                <BillingLink to={trailPath({ uid: l.userId, cid, lid: l.licenseID })}>
                  <code>{l.licenseID}</code>
                </BillingLink>
              ))}
            />
          )}
        </Show>
      </Section>
    </>
  );
}

/**
 * One license on a cluster (`.../licenses/:lid`): the license, what the cluster last reported about itself, and
 * the products received under it in the window.
 */
export function LicenseScreen({ org }: { org: string }) {
  return (
    <Trailed org={org}>
      {(trail) => trail.cid && trail.lid && <LicenseProducts org={org} trail={{ ...trail, cid: trail.cid, lid: trail.lid }} />}
    </Trailed>
  );
}

function LicenseProducts({ org, trail }: { org: string; trail: Trail & { cid: string; lid: string } }) {
  const limit = useWindow();
  const { uid, cid, lid } = trail;
  const path = { uid, cid, lid };
  const license = useReport(['license', org, uid, cid, lid], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}', { params: { path, query: { org } } })),
  );
  const products = useReport(['products', org, uid, cid, lid, limit], () =>
    ok(api.GET('/dashboard/users/{uid}/clusters/{cid}/licenses/{lid}/products/', { params: { path, query: { org, limit } } })),
  );
  return (
    <>
      <Show loaded={license}>
        {({ license: l, siteinfo }) => (
          <div className="grid">
            <Section title="License">
              <Facts
                label={`License ${l.licenseID}`}
                facts={[
                  ['License ID', <code key="lid">{l.licenseID}</code>],
                  ['Holder (account id)', l.uid],
                  ['Email', l.email],
                  ['Plan', l.planName || 'not issued by the platform'],
                  ['Clusters', l.clusters.join(', ')],
                  ['Valid from', when(l.notBefore)],
                  ['Valid until', when(l.notAfter)],
                  ['Registered', when(l.registeredAt)],
                  ['Created', when(l.createdAt)],
                  ['Updated', when(l.updatedAt)],
                ]}
              />
            </Section>
            <Section title="Site info">
              {Object.keys(siteinfo).length === 0 ? (
                <p className="empty">The cluster is not in the inventory.</p>
              ) : (
                <Facts
                  label="What the cluster last reported about itself"
                  facts={[
                    ['Name', textOf(siteinfo, 'name')],
                    ['Display name', textOf(siteinfo, 'displayName')],
                    ['Provider', textOf(siteinfo, 'provider')],
                    ['Kubernetes version', textOf(siteinfo, 'kubernetesVersion')],
                    ['Nodes', textOf(siteinfo, 'nodeCount')],
                    ['Status', textOf(siteinfo, 'status', 'phase')],
                    ['Manager endpoint', textOf(siteinfo, 'managerEndpoint')],
                    ['Hub', textOf(siteinfo, 'hubUID')],
                    ['Features', features(siteinfo)],
                    ['Observed', when(textOf(siteinfo, 'observedAt'))],
                  ]}
                />
              )}
            </Section>
          </div>
        )}
      </Show>
      <Section title="Products">
        <ActivityWindow />
        <Show loaded={products}>
          {(rows) => (
            <Table
              caption={`Products received under the license in the window ${limit}`}
              rows={rows}
              rowKey={(p) => p.productName}
              columns={[
                {
                  header: 'Product',
                  cell: (p) => <BillingLink to={trailPath({ ...trail, product: p.productName })}>{p.productName}</BillingLink>,
                },
                { header: 'Account', cell: (p) => `${p.userName || 'deleted account'} (${p.userType || 'unknown'} ${p.userID})` },
                { header: 'First received', cell: (p) => when(p.firstReceivedAt), value: (p) => instant(p.firstReceivedAt) },
                { header: 'Last received', cell: (p) => when(p.lastReceivedAt), value: (p) => instant(p.lastReceivedAt) },
              ]}
            />
          )}
        </Show>
      </Section>
    </>
  );
}

/** The siteinfo's features, `name version`, comma-separated. */
function features(siteinfo: Record<string, unknown>): string {
  const list = siteinfo.features;
  if (!Array.isArray(list)) return '';
  return list.map((f: unknown) => `${textOf(f, 'name')} ${textOf(f, 'version')}`.trim()).join(', ');
}
