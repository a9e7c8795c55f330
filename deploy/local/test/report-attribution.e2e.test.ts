import { randomUUID } from 'node:crypto';
import { seal, subjectOf, toBusPayload, type PayloadOf } from '@platform/agent-protocol';
import type { Bus } from '@platform/bus';
import { agentV1 } from '@platform/proto';
import { eventually } from '@platform/testing';
import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * Member-cluster reports are attributed from what the platform knows, never from their claims
 * (docs/billing-ingestion.md, "Attribution"), on the whole platform: two tenants each enroll a hub over HTTP, the
 * site admin makes their contracts and issues their hubs' licenses, and tenant A's hub reports, with its own key on
 * the bus as the simulator does, usage naming tenant B's contract, tenant B's owner, an unknown user id and tenant
 * B's license. The admin views over HTTP show it all as tenant A's (or under no contract), nothing as B's, no user
 * 999999; B's license is refused; the refused claims are counted in /metrics.
 */

const MONTH = { year: 2026, month: 3 };
const AT = Date.UTC(MONTH.year, MONTH.month - 1, 10);
const YEAR = 365 * 86_400;

describe('reports are attributed from the platform’s records, not from their claims', () => {
  let t: TestPlatform;
  let bus: Bus;
  const tenants = {
    a: { org: 'tenant-a', owner: 'alice', hub: randomUUID(), id: 0, seed: '', contract: 0, serial: '' },
    b: { org: 'tenant-b', owner: 'bob', hub: randomUUID(), id: 0, seed: '', contract: 0, serial: '' },
  };
  const sent: string[] = [];
  /** The id of the report naming tenant B's license. */
  let refusedId = '';
  const get = async (p: string) => {
    const res = await t.api('root', 'GET', `${p}${p.includes('?') ? '&' : '?'}org=tenant-a`);
    expect({ path: p, status: res.status }).toEqual({ path: p, status: 200 });
    return res.body;
  };
  /** Seals a report of tenant A's hub with its key and publishes it on the platform's bus. */
  const report = async <K extends 'license-usage' | 'usage-sample'>(kind: K, payload: PayloadOf[K]) => {
    const messageId = randomUUID();
    await bus.publish(subjectOf(tenants.a.hub, kind), toBusPayload(seal(kind, payload, tenants.a.seed, { messageId })));
    sent.push(messageId);
  };
  const sample = (objectUid: string, over: Partial<agentV1.UsageSample>): agentV1.UsageSample => ({
    product: 'productdb',
    contractId: 0,
    licenseId: 'lic-offline',
    userId: tenants.a.id,
    clusterUid: tenants.a.hub,
    clusterName: 'hub-a',
    hosting: 'aws',
    namespace: 'db',
    namespaceUid: randomUUID(),
    group: 'kubedb.com',
    kind: 'Postgres',
    name: `pg-${objectUid.slice(0, 4)}`,
    objectUid,
    version: '16.4',
    topology: agentV1.Topology.TOPOLOGY_STANDALONE,
    replicas: 1,
    startMs: AT,
    endMs: AT + 6 * 3_600_000,
    resources: [{ resource: 'cpu', request: 1000, limit: 2000, used: 500 }],
    ...over,
  });
  const usage = (over: Partial<agentV1.LicenseUsage>): agentV1.LicenseUsage => ({
    userId: tenants.a.id,
    clusterUid: tenants.a.hub,
    licenseId: 'lic-offline',
    product: 'productdb',
    receivedAtMs: Date.now() - 3_600_000,
    ...over,
  });

  beforeAll(async () => {
    // The embedded default's in-process bus, which the test publishes on as the demo seed's simulator does.
    t = await bootTestPlatform({ BILLING_ENABLED: 'true', DEPLOYMENT_TYPE: 'Hosted', NATS_URL: undefined as unknown as string });
    bus = t.platform.apps.get('billing-dashboard')!.ctx.bus!;
    for (const tenant of Object.values(tenants)) {
      await t.signUp(tenant.owner);
      const org = await t.api(tenant.owner, 'POST', '/orgs', { username: tenant.org });
      expect(org.status).toBe(201);
      tenant.id = org.body.id;
      const enrolled = await t.api(tenant.owner, 'POST', `/orgs/${tenant.org}/clusters`, { name: 'hub', uid: tenant.hub });
      expect(enrolled.status).toBe(201);
      tenant.seed = enrolled.body.bus.seed;
      const inventory: agentV1.InventoryReport = {
        hub: {
          uid: tenant.hub,
          name: 'hub',
          displayName: 'hub',
          provider: 'aws',
          kubernetesVersion: 'v1.31.1',
          nodeCount: 3,
          statusJson: '{}',
          createdAtMs: Date.UTC(2026, 0, 1),
          namespaces: [],
          features: [],
          connectedUsers: [],
        },
        spokes: [],
        managerEndpoint: '',
        observedAtMs: Date.now(),
      };
      await bus.publish(subjectOf(tenant.hub, 'inventory'), toBusPayload(seal('inventory', inventory, tenant.seed)));
      await eventually(
        async () => (await t.api(tenant.owner, 'GET', `/orgs/${tenant.org}/clusters`)).body.some((c: any) => c.nodeCount === 3),
        20_000,
      );

      // The tenant's productdb contract with its hub bound, and a license issued for the hub.
      const form = new FormData();
      for (const [k, v] of Object.entries({
        name: `${tenant.org} db`,
        products: '["productdb"]',
        end: String(Math.floor(Date.now() / 1000) + YEAR),
      }))
        form.append(k, v);
      const made = await t.send('root', 'POST', `/contracts?org=${tenant.org}`, form);
      expect(made.status).toBe(201);
      tenant.contract = made.body[0].id;
      const bound = await t.api('root', 'POST', `/contracts/${tenant.contract}/clusters?org=${tenant.org}`, [{ cluster: tenant.hub }]);
      expect(bound.status).toBe(201);
      const issued = await t.api(
        'root',
        'POST',
        `/contracts/${tenant.contract}/clusters/${bound.body[0].id}/issue-license?org=${tenant.org}`,
      );
      expect(issued.status).toBe(200);
      tenant.serial = (
        await t.platform.apps.get('contracts-licensing')!.ctx.db!.table('issued_licenses').where({ cluster_uid: tenant.hub }).first()
      ).serial;
    }

    const { a, b } = tenants;
    // Usage samples: one naming B's contract, one naming A's own, one under A's issued license naming none.
    await report('usage-sample', sample(randomUUID(), { licenseId: 'lic-forged-contract', contractId: b.contract }));
    await report('usage-sample', sample(randomUUID(), { licenseId: 'lic-own-contract', contractId: a.contract }));
    await report('usage-sample', sample(randomUUID(), { licenseId: a.serial, contractId: 0, userId: tenants.b.id }));
    // License usage naming B's owner, an unknown user, and B's license (issued for B's hub).
    await report('license-usage', usage({ licenseId: 'lic-forged-user', userId: t.ids.bob }));
    await report('license-usage', usage({ licenseId: 'lic-unknown-user', userId: 999_999 }));
    await report('license-usage', usage({ licenseId: a.serial, userId: t.ids.bob }));
    await report('license-usage', usage({ licenseId: b.serial, userId: b.id }));
    refusedId = sent.pop()!;
    // An honest report after them: each consumer handles its reports in order, so once every applied report's id
    // is kept, the refused one (whose id is not) has been handled too.
    await report('license-usage', usage({ licenseId: 'lic-marker' }));
    const billing = t.platform.apps.get('billing-dashboard')!.ctx.db!;
    await eventually(async () => (await billing.table('agent_seen_messages').whereIn('message_id', sent)).length === sent.length, 30_000);
  }, 240_000);
  afterAll(() => t?.stop());

  it('shows a sample naming another tenant’s contract under no contract in the contracts view, never under that contract', async () => {
    const views = `/dashboard/summary/${MONTH.year}/${String(MONTH.month).padStart(2, '0')}/usage-report/products/productdb/views`;
    const contracts = (await get(`${views}/contracts-usage-view`)).rows.map((r: any) => r.contractID).sort();
    expect(contracts).toEqual([0, tenants.a.contract].sort());
    expect(contracts).not.toContain(tenants.b.contract);
    expect((await get(`${views}/clusters-usage-view?contractID=${tenants.b.contract}`)).rows).toEqual([]);
    // A's own contract holds its sample and the one under its license: 2 × 6 object-hours.
    const own = (await get(`${views}/clusters-usage-view?contractID=${tenants.a.contract}`)).rows;
    expect(own.map((r: any) => [r.clusterUID, r.objectHours])).toEqual([[tenants.a.hub, expect.closeTo(12, 6)]]);
  });

  it('never makes another tenant’s owner or an unknown id a licensed user: the usage is the cluster owner’s', async () => {
    const users = (await get('/dashboard/users/')).map((u: any) => u.userID);
    expect(users).toContain(tenants.a.id);
    expect(users).not.toContain(t.ids.bob);
    expect(users).not.toContain(999_999);
    expect(users).not.toContain(tenants.b.id);
    expect(await get(`/dashboard/users/${t.ids.bob}/clusters/`)).toEqual([]);
    expect(await get('/dashboard/users/999999/clusters/')).toEqual([]);
    expect((await get('/dashboard/users/inactive')).map((u: any) => u.username)).toContain('bob');

    const active = await get('/dashboard/users/active');
    expect(active.find((u: any) => u.userID === tenants.a.id)).toMatchObject({ username: 'tenant-a', userType: 'organization' });
    expect((await get(`/dashboard/users/${tenants.a.id}/clusters/`)).map((c: any) => c.uid)).toEqual([tenants.a.hub]);
    const licenses = (await get(`/dashboard/users/${tenants.a.id}/clusters/${tenants.a.hub}/licenses/`))
      .map((l: any) => l.licenseID)
      .sort();
    expect(licenses).toEqual(['lic-forged-user', 'lic-marker', 'lic-unknown-user', tenants.a.serial].sort());
  });

  it('refuses a report naming a license the platform issued for another cluster: on no dashboard, its id not kept', async () => {
    expect((await get(`/dashboard/clusters/${tenants.a.hub}/licenses/active`)).map((l: any) => l.licenseID)).not.toContain(
      tenants.b.serial,
    );
    expect(await get(`/dashboard/users/${tenants.b.id}/clusters/`)).toEqual([]);
    const billing = t.platform.apps.get('billing-dashboard')!.ctx.db!;
    expect(await billing.table('agent_seen_messages').where({ message_id: refusedId })).toEqual([]);
  });

  it('counts the refused claims by kind and reason in /metrics', async () => {
    const text = await (await fetch(`${t.platform.url}metrics`)).text();
    const value = (labels: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`billing_agent_claims_refused_total{${labels}}`))
          ?.split(' ')[1] ?? 0,
      );
    expect(value('kind="usage-sample",reason="contract-mismatch"')).toBe(2);
    expect(value('kind="usage-sample",reason="user-mismatch"')).toBe(1);
    expect(value('kind="license-usage",reason="user-mismatch"')).toBe(3);
    expect(value('kind="license-usage",reason="license-of-other-cluster"')).toBe(1);
  });
});
