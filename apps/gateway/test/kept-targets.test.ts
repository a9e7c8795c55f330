import { CLUSTERS_CHANGED, InProcessBus, ORGS_CHANGED, type ClustersChanged, type OrgsChanged } from '@platform/bus';
import { NotFoundError } from '@platform/errors';
import { clustersV1, orgsTeamsOrgsV1 } from '@platform/proto';
import { loadConfig } from '@platform/service-kit';
import { LaterBus } from '@platform/testing';
import { gatewayEnv, type GatewayConfig } from '../src/config';
import type { EdgeContext } from '../src/route';
import { followKeptPerGateway } from '../src/kept-per-gateway';
import { hubInPath } from '../src/sections/cluster-sets/hub';
import { teamInPath, teamWithRolesInPath } from '../src/targets';

const ORG = orgsTeamsOrgsV1.Organization.fromPartial({ id: 7, username: 'acme' });
const hub = (uid: string, name: string) =>
  clustersV1.Cluster.fromPartial({ id: 40, uid, name, ownerType: 'organization', ownerId: 7, statusJson: '{"phase":"Ready"}' });

/** The clusters app as the gateway sees it: the hubs it holds, and how often it was asked. */
function inventory() {
  const hubs = new Map<string, clustersV1.Cluster>();
  const asked: string[] = [];
  return {
    hubs,
    asked,
    /** One request's context: its own request object, as the edge makes one per request. */
    request: (config: GatewayConfig) =>
      ({
        config,
        req: {},
        caller: { id: 5 },
        backends: {
          orgsTeams: { organizations: { getOrg: async () => ORG } },
          clusters: {
            clusters: {
              getHub: async (q: clustersV1.GetHubRequest) => {
                asked.push(`${q.ownerType}:${q.ownerId}|${q.name}`);
                const found = hubs.get(q.name);
                if (!found) throw new NotFoundError(`cluster "${q.name}" not found`);
                return found;
              },
            },
          },
        },
      }) as unknown as EdgeContext,
  };
}

const config = () => loadConfig(gatewayEnv, { LOG_LEVEL: 'silent' });
const resolve = (inv: ReturnType<typeof inventory>, cfg: GatewayConfig, name: string) =>
  hubInPath.resolve({ owner: 'acme', cluster: name }, inv.request(cfg));

describe("the gateway's resolved hubs", () => {
  it("asks clusters once for an owner's hub name, then answers the hub's ids and name from what it kept", async () => {
    const cfg = config();
    const stop = await followKeptPerGateway(cfg, new InProcessBus());
    const inv = inventory();
    inv.hubs.set('east', hub('0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4', 'east'));
    expect(await resolve(inv, cfg, 'east')).toEqual({ id: 40, uid: '0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4', name: 'east' });
    expect(await resolve(inv, cfg, 'east')).toEqual({ id: 40, uid: '0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4', name: 'east' });
    expect(inv.asked).toEqual(['organization:7|east']);
    await stop();
  });

  it('keeps no miss: a hub made after a 404 is found by the very next request', async () => {
    const cfg = config();
    const stop = await followKeptPerGateway(cfg, new InProcessBus());
    const inv = inventory();
    await expect(resolve(inv, cfg, 'west')).rejects.toBeInstanceOf(NotFoundError);
    inv.hubs.set('west', hub('1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5', 'west'));
    expect((await resolve(inv, cfg, 'west')).uid).toBe('1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5');
    await stop();
  });

  it("resolves afresh after clusters' notice that the hub is gone, even when the notice is still on its way", async () => {
    const cfg = config();
    const bus = new LaterBus();
    const stop = await followKeptPerGateway(cfg, bus);
    const inv = inventory();
    inv.hubs.set('east', hub('0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4', 'east'));
    await resolve(inv, cfg, 'east');
    // The hub was taken back and another one of the same name recorded.
    inv.hubs.set('east', hub('5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', 'east'));
    await bus.notify(CLUSTERS_CHANGED, { uids: ['0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4'], owners: ['organization:7'] } satisfies ClustersChanged);
    expect((await resolve(inv, cfg, 'east')).uid).toBe('5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b');
    // Another hub's notice leaves it kept.
    await bus.notify(CLUSTERS_CHANGED, { uids: ['1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5'], owners: ['organization:7'] } satisfies ClustersChanged);
    await resolve(inv, cfg, 'east');
    expect(inv.asked).toHaveLength(2);
    await stop();
  });

  it('keeps nothing for a gateway that does not follow the bus, nor for another gateway in the same process', async () => {
    const following = config();
    const stop = await followKeptPerGateway(following, new InProcessBus());
    const inv = inventory();
    inv.hubs.set('east', hub('0b7d4c1e-2f3a-4b5c-8d6e-7f8091a2b3c4', 'east'));
    await resolve(inv, following, 'east');
    const other = config();
    await resolve(inv, other, 'east');
    await resolve(inv, other, 'east');
    expect(inv.asked).toHaveLength(3);
    await stop();
  });
});

describe("the gateway's resolved teams", () => {
  const team = (id: number, orgId: number, name: string) =>
    orgsTeamsOrgsV1.Team.fromPartial({ id, name, organization: orgsTeamsOrgsV1.Organization.fromPartial({ id: orgId, username: 'acme' }) });

  /** orgs-teams as the gateway sees it: its teams, and how often it was asked for one. */
  function teams() {
    const held = new Map<number, orgsTeamsOrgsV1.Team>();
    const asked: string[] = [];
    const request = (cfg: GatewayConfig) =>
      ({
        config: cfg,
        req: {},
        caller: { id: 5 },
        backends: {
          orgsTeams: {
            organizations: {
              getOrg: async () => ORG,
              getTeam: async (q: orgsTeamsOrgsV1.GetTeamRequest) => {
                asked.push(`${q.teamId}|${q.orgId}|${q.withRoles}`);
                const found = held.get(q.teamId);
                if (!found || (q.orgId && found.organization!.id !== q.orgId)) throw new NotFoundError(`team ${q.teamId} does not exist`);
                return found;
              },
            },
          },
        },
      }) as unknown as EdgeContext;
    return { held, asked, request };
  }

  it("asks orgs-teams once for a team, and again after the organizations notice naming the team's organization", async () => {
    const cfg = config();
    const bus = new LaterBus();
    const stop = await followKeptPerGateway(cfg, bus);
    const t = teams();
    t.held.set(3, team(3, 7, 'ops'));
    expect((await teamInPath.resolve({ teamid: 3 }, t.request(cfg))).name).toBe('ops');
    expect((await teamInPath.resolve({ teamid: 3 }, t.request(cfg))).name).toBe('ops');
    expect(t.asked).toEqual(['3|0|false']);
    // Renamed: orgs-teams names the organization in its notice, still on its way when the next request comes.
    t.held.set(3, team(3, 7, 'operations'));
    await bus.notify(ORGS_CHANGED, { orgIds: [7] } satisfies OrgsChanged);
    expect((await teamInPath.resolve({ teamid: 3 }, t.request(cfg))).name).toBe('operations');
    // Another organization's notice leaves it kept.
    await bus.notify(ORGS_CHANGED, { orgIds: [8] } satisfies OrgsChanged);
    await teamInPath.resolve({ teamid: 3 }, t.request(cfg));
    expect(t.asked).toHaveLength(2);
    await stop();
  });

  it('keeps no miss, and never keeps a team with its roles (authz decides those)', async () => {
    const cfg = config();
    const stop = await followKeptPerGateway(cfg, new InProcessBus());
    const t = teams();
    await expect(teamInPath.resolve({ teamid: 4 }, t.request(cfg))).rejects.toBeInstanceOf(NotFoundError);
    t.held.set(4, team(4, 7, 'new'));
    expect((await teamInPath.resolve({ teamid: 4 }, t.request(cfg))).name).toBe('new');
    await teamWithRolesInPath.resolve({ teamid: 4 }, t.request(cfg));
    await teamWithRolesInPath.resolve({ teamid: 4 }, t.request(cfg));
    expect(t.asked).toEqual(['4|0|false', '4|0|false', '4|0|true', '4|0|true']);
    await stop();
  });
});
