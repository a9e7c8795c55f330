import { InProcessBus, ORGS_CHANGED, type OrgsChanged } from '@platform/bus';
import { NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1 } from '@platform/proto';
import { loadConfig } from '@platform/service-kit';
import { LaterBus } from '@platform/testing';
import { gatewayEnv, type GatewayConfig } from '../src/config';
import type { EdgeContext } from '../src/route';
import { followKeptPerGateway } from '../src/kept-per-gateway';
import { teamInPath, teamWithRolesInPath } from '../src/targets';

const ORG = orgsTeamsOrgsV1.Organization.fromPartial({ id: 7, username: 'acme' });
const config = () => loadConfig(gatewayEnv, { LOG_LEVEL: 'silent' });
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
