import { startPrivateNats, type PrivateNats } from '@platform/testing';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';

/**
 * Two installations on one nats-server, each with its own demo data seeded over it (DEMO_SEED_MANIFEST's seed): the
 * same hub UIDs, message ids, subjects and durable consumer names in both, which used to make each take the other's
 * reports (the second seed then waited in vain for its inventory). Each has its own namespace, so each applies every
 * report of its own and its dashboard shows exactly its demo.
 */
describe('two installations sharing one NATS server', () => {
  let nats: PrivateNats;
  const platforms: DemoPlatform[] = [];
  beforeAll(async () => {
    nats = await startPrivateNats();
    // One after the other, the first serving (and consuming) all along while the second seeds.
    for (let i = 0; i < 2; i++) platforms.push(await bootDemoPlatform({}, { natsUrl: nats.url }));
  }, 600_000);
  afterAll(async () => {
    for (const p of platforms) await p.stop();
    await nats?.dispose();
  });

  const busNamespace = (p: DemoPlatform) => p.t.platform.apps.get('billing-dashboard')!.ctx.bus!.namespace;
  const applied = async (p: DemoPlatform) =>
    Number((await p.t.platform.apps.get('billing-dashboard')!.ctx.db!.table('agent_seen_messages').count({ n: '*' }))[0].n);
  const dashboard = async (p: DemoPlatform) => {
    const owner = p.manifest.owner.username;
    const res = await p.t.api(owner, 'GET', `/dbaas/billing/reports/namespaces?org=${p.manifest.owner.org}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('gives each its own namespace on the server', () => {
    const [a, b] = platforms.map(busNamespace);
    expect(a).toMatch(/^platform-[0-9a-f]{12}$/);
    expect(b).toMatch(/^platform-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
  });

  it("applies every report of each one's own simulated clusters, and none of the other's", async () => {
    const [a, b] = platforms;
    // The same demo world: as many billing reports applied by each, every one its own (a report of the other
    // installation names a bus account this one never issued, and one taken by the other would be missing here).
    expect(await applied(a)).toBeGreaterThan(0);
    expect(await applied(b)).toBe(await applied(a));
    const [rowsA, rowsB] = [await dashboard(a), await dashboard(b)];
    expect(rowsA.rows.length).toBeGreaterThan(0);
    expect(rowsB).toEqual(rowsA);
    expect(rowsA.rows.map((r: { clusterUID: string }) => r.clusterUID)).toContain(a.usage.cid);
  });
});
