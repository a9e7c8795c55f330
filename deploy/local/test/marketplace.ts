import { gunzipSync } from 'node:zlib';
import type { Database } from '@platform/db';
import { contractsV1, orgClaimsV1, orgsTeamsOrgsV1 } from '@platform/proto';
import { createClient } from '@platform/service-kit';
import type { TestPlatform } from './harness';

/** What the marketplace end-to-end suites share: the listener over the gateway, installers, and what a binding left. */
export function marketplaceKit(t: () => TestPlatform) {
  const root = () => `${t().platform.url}marketplace/api/v1`;
  const db = (): Database => t().platform.apps.get('marketplace-listener')!.ctx.db!;

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${root()}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };

  /** A site admin prepares an installer through the gateway. */
  const installer = async (marketplace: string, options: object = { product: 'productdb' }): Promise<string> => {
    const res = await t().api('root', 'POST', '/marketplaces/installers', { marketplace, options });
    if (res.status !== 201) throw new Error(`installer: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  };

  const binding = (marketplace: string, installerId: string, extra: object = {}) => ({
    marketplace,
    installerId,
    clusterId: '5e6f7a8b-0000-4000-8000-00000000c1a5',
    adminUsername: 'buyer-admin',
    adminPassword: 'buyer-Secret-pw-1',
    domainWhiteList: ['buyer.example.com'],
    options: {},
    ...extra,
  });

  /** Everything a notification may leave behind, to show a refused one left nothing. */
  const footprint = async () => ({
    subscriptions: await db()
      .table('subscriptions')
      .orderBy(['marketplace', 'subscription_id'])
      .select('subscription_id', 'state', 'bounded_installer_id'),
    bound: await db().table('installers').whereNotNull('subscription_id').orderBy('id').pluck('id'),
    answered: Number((await db().table('notifications').count({ n: '*' }))[0].n),
    outbox: Number((await db().table('outbox').count({ n: '*' }))[0].n),
  });

  const subscription = (marketplace: string, id: string) => db().table('subscriptions').where({ marketplace, subscription_id: id }).first();
  /** The archive behind a `{link}`, fetched as a buyer would, as the text of its tar (gunzipped). */
  const download = async (link: string) => {
    const res = await fetch(link);
    const bytes = Buffer.from(await res.arrayBuffer());
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      tar: res.status === 200 ? gunzipSync(bytes).toString('latin1') : '',
    };
  };

  const claimable = async (claimId: string) => {
    const res = await fetch(`${root()}/marketplaces/standalone-organizations/${claimId}/claimable`);
    return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
  };

  /** The contracts of the subscriber organization, from contracts-licensing. */
  const contractsOf = async (ownerId: number) => {
    const client = createClient(contractsV1.ContractsServiceService, t().grpcAddress('contracts-licensing'), {
      name: 'contracts-licensing',
    });
    try {
      return (await client.listContracts({ ownerId, activeOnly: false, offlineOnly: false, boundTo: '', notBoundTo: '' })).contracts;
    } finally {
      client.close();
    }
  };

  /** Claims a standalone organization as `userId` (PATCH /orgs/claim is a hosted route; the RPC is what it calls). */
  const claimOrg = async (claimId: string, userId: number) => {
    const client = createClient(orgClaimsV1.OrgClaimsServiceService, t().grpcAddress('orgs-teams'), { name: 'orgs-teams' });
    try {
      return await client.claimOrg({ claimId, userId });
    } finally {
      client.close();
    }
  };

  const membersOf = async (id: number, viewerId: number) => {
    const client = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, t().grpcAddress('orgs-teams'), { name: 'orgs-teams' });
    try {
      const members = await client.listMembers({ orgId: id, viewerId, publicOnly: false });
      return members.members.map((m) => m.login);
    } finally {
      client.close();
    }
  };

  return { root, db, post, installer, binding, footprint, subscription, download, claimable, contractsOf, claimOrg, membersOf };
}
