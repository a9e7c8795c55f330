import { NotFoundError } from '@platform/errors';
import { authzRolesV1, authzV1, contractsV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// "Who has access" at the edge (docs/authorization.md): an org owner or a site admin sees every user holding each
// permission of the organization, or of one of its contracts or clusters, with the grant that gives it, named; nobody
// else may look (a member whose role lets it edit the organization neither), and another organization's objects are
// not found. Against stand-ins: authz answers the holders (apps/authz/src/who-has-access.int.test.ts says which),
// orgs-teams the names, contracts-licensing whose a contract is. Names shown fresh after a rename:
// deploy/local/test/invalidation.int.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  olivia: orgsTeamsV1.User.fromPartial({ id: 2, login: 'olivia', active: true }),
  mia: orgsTeamsV1.User.fromPartial({ id: 3, login: 'mia', active: true }),
  nora: orgsTeamsV1.User.fromPartial({ id: 4, login: 'nora', active: true }),
  otto: orgsTeamsV1.User.fromPartial({ id: 5, login: 'otto', active: true }),
};
/** acme: owner olivia (through Owners), mia in devs (which carries the role Editors), nora a plain member. globex: otto's. */
const ORGS: Record<string, { id: number; owner: number; members: number[] }> = {
  acme: { id: 10, owner: 2, members: [2, 3, 4] },
  globex: { id: 20, owner: 5, members: [5] },
};
const OWNERS_TEAM = 100;
const DEVS = 101;
const EDITORS = 7;
const CONTRACT = 55;
const CLUSTER = '8d3b1f0e-0000-4000-8000-000000000000';

const path = (kind: string, over: Partial<authzV1.AccessPath> = {}) => authzV1.AccessPath.fromPartial({ kind, ...over });
/** authz's answer for the organization: edit:org by its owner, the role through devs and the site admin; view_team by membership too. */
const ORG_ACCESS = authzV1.WhoHasAccessResponse.fromPartial({
  permissions: [
    {
      permission: 'edit:org',
      relation: 'edit',
      description: 'Edit the organization',
      users: [
        { userId: 1, paths: [path('site_admin')] },
        { userId: 2, paths: [path('owner', { teamId: OWNERS_TEAM })] },
        { userId: 3, paths: [path('role', { roleId: EDITORS, teamId: DEVS })] },
      ],
    },
    {
      permission: 'view:team',
      relation: 'view_team',
      description: 'View teams',
      users: [
        { userId: 2, paths: [path('owner', { teamId: OWNERS_TEAM })] },
        { userId: 4, paths: [path('relation:member')] },
      ],
    },
  ],
});
/** And for its contract: every member views it, its owners issue its licenses. */
const CONTRACT_ACCESS = authzV1.WhoHasAccessResponse.fromPartial({
  permissions: [
    { permission: 'view:contract', relation: 'view', users: [2, 3, 4].map((userId) => ({ userId, paths: [path('relation:member')] })) },
    { permission: 'issue_license:contract', relation: 'issue_license', users: [{ userId: 2, paths: [path('owner')] }] },
  ],
});

describe('who has access at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
          getAccounts: async ({ ids }) => ({ users: Object.values(USERS).filter((u) => ids.includes(u.id)) }),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (!ORGS[name]) throw new NotFoundError(`organization ${name} does not exist`);
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: ORGS[name].id, username: name, visibility: 'public' });
          },
          listTeams: async () => ({
            teams: [
              orgsTeamsOrgsV1.Team.fromPartial({ id: OWNERS_TEAM, name: 'Owners' }),
              orgsTeamsOrgsV1.Team.fromPartial({ id: DEVS, name: 'devs' }),
            ],
            total: 2,
          }),
        },
      },
      authz: {
        authz: {
          // Members have access:org; only the owner (and root) manage_owners:org. mia's role lets her edit, no more.
          checkPermission: async ({ userId, permission, objectId }) => {
            const org = Object.values(ORGS).find((o) => o.id === objectId);
            const allowed =
              userId === USERS.root.id || (permission === 'access:org' ? !!org?.members.includes(userId) : org?.owner === userId);
            return { allowed, dependsOn: [] };
          },
          // No cluster is acme's.
          check: async () => ({ allowed: false, dependsOn: [] }),
          whoHasAccess: async ({ object }) => (object.startsWith('contract:') ? CONTRACT_ACCESS : ORG_ACCESS),
        },
        roles: {
          listRoles: async () => ({ roles: [authzRolesV1.Role.fromPartial({ id: EDITORS, name: 'Editors' })], maxRolesPerTeam: 10 }),
        },
      },
      contractsLicensing: {
        contracts: {
          getContract: async ({ id, ownerId }) => {
            if (id !== CONTRACT || ownerId !== ORGS.acme.id) throw new NotFoundError(`contract ${id} not found`);
            return contractsV1.Contract.fromPartial({ id, ownerId });
          },
        },
      },
    });
    ({ base, close } = await startTestGateway(backends.env));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const get = async (who: string, type: string, id: string | number) => {
    const res = await fetch(`${base}/api/v1/authz/objects/${type}/${id}/access?org=acme`, { headers: { authorization: `token ${who}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const holders = (body: any, relation: string) =>
    Object.fromEntries(
      body.permissions
        .find((p: { relation: string }) => p.relation === relation)
        .users.map((u: { login: string; paths: unknown[] }) => [u.login, u.paths]),
    );

  it('shows an owner every holder of each permission, with the owner, team, role, site-admin and membership paths named', async () => {
    const res = await get('olivia', 'organization', ORGS.acme.id);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe(`organization:${ORGS.acme.id}`);
    expect(res.body.permissions[0]).toMatchObject({ permission: 'edit:org', relation: 'edit', description: 'Edit the organization' });
    expect(holders(res.body, 'edit')).toEqual({
      root: [{ kind: 'site_admin' }],
      olivia: [{ kind: 'owner', team_id: OWNERS_TEAM, team_name: 'Owners' }],
      mia: [{ kind: 'role', role_id: EDITORS, role_name: 'Editors', team_id: DEVS, team_name: 'devs' }],
    });
    expect(holders(res.body, 'view_team').nora).toEqual([{ kind: 'relation', relation: 'member' }]);
    expect(backends.authz.callsTo('authz', 'whoHasAccess').at(-1)).toEqual({ object: `organization:${ORGS.acme.id}` });
  });

  it('answers a site admin too', async () => {
    expect((await get('root', 'organization', ORGS.acme.id)).status).toBe(200);
  });

  it('refuses members who are not owners, even one whose role lets them edit the organization, and outsiders', async () => {
    backends.authz.reset();
    for (const who of ['mia', 'nora']) {
      expect(await get(who, 'organization', ORGS.acme.id)).toEqual({
        status: 403,
        body: { message: expect.stringMatching(/owner or site admin/), url: expect.any(String) },
      });
    }
    expect((await get('otto', 'organization', ORGS.acme.id)).status).toBe(403);
    expect(backends.authz.callsTo('authz', 'whoHasAccess')).toEqual([]);
  });

  it("shows the holders of one of the organization's contracts, handing authz the owner contracts-licensing says", async () => {
    const res = await get('olivia', 'contract', CONTRACT);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe(`contract:${CONTRACT}`);
    expect(Object.keys(holders(res.body, 'view')).sort()).toEqual(['mia', 'nora', 'olivia']);
    expect(holders(res.body, 'issue_license')).toEqual({ olivia: [{ kind: 'owner' }] });
    expect(backends.contractsLicensing.callsTo('contracts', 'getContract').at(-1)).toMatchObject({ id: CONTRACT, ownerId: ORGS.acme.id });
    expect(backends.authz.callsTo('authz', 'whoHasAccess').at(-1)).toEqual({
      object: `contract:${CONTRACT}`,
      owner: `organization:${ORGS.acme.id}`,
    });
  });

  it('answers 404 for another organization, a contract or cluster the organization does not own, and 400 for another kind', async () => {
    backends.authz.reset();
    expect((await get('olivia', 'organization', ORGS.globex.id)).status).toBe(404);
    expect((await get('olivia', 'contract', 987_654)).status).toBe(404);
    expect((await get('olivia', 'contract', 'c-none')).status).toBe(404);
    expect((await get('olivia', 'cluster', CLUSTER)).status).toBe(404);
    expect(backends.authz.callsTo('authz', 'check').at(-1)).toMatchObject({
      tuple: { user: `organization:${ORGS.acme.id}`, relation: 'owner', object: `cluster:${CLUSTER}` },
    });
    expect((await get('olivia', 'team', DEVS)).status).toBe(400);
    expect(backends.authz.callsTo('authz', 'whoHasAccess')).toEqual([]);
  });
});
