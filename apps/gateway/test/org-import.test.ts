import { orgsTeamsImportV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// The import of organizations in bulk at the edge (POST /admin/orgs/import, docs/import.md): site admins only, a body
// of the wrong shape 422 before orgs-teams is asked, the batch handed on as sent and what became of each organization
// answered. What orgs-teams makes of a batch (created, unchanged, refused naming the fault, the tuples):
// apps/orgs-teams/test/import.int.test.ts; an imported organization read and authorized by the ordinary routes:
// deploy/local/test/authz.int.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  olivia: orgsTeamsV1.User.fromPartial({ id: 2, login: 'olivia', active: true }),
};

const ACME = {
  name: 'acme',
  full_name: 'Acme Inc.',
  owners: ['olivia'],
  teams: [
    { name: 'devs', members: ['mia'], roles: ['editors'] },
    { name: 'ops', members: ['nora'], permission: 'write' },
  ],
  roles: [{ name: 'editors', description: 'edit the organization', permissions: [{ namespace: 'org', action: 'edit' }] }],
};

describe('POST /admin/orgs/import at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
        },
        organizations: {
          importOrgs: async ({ orgs }) => ({
            results: orgs.map((o) =>
              o.name === 'acme'
                ? orgsTeamsImportV1.ImportedOrgResult.fromPartial({
                    name: 'acme',
                    outcome: 'created',
                    orgId: 10,
                    created: { orgs: 1, teams: 3, memberships: 3, roles: 1, roleAssignments: 1 },
                    existing: {},
                  })
                : orgsTeamsImportV1.ImportedOrgResult.fromPartial({
                    name: o.name,
                    outcome: 'refused',
                    errors: ['no user named "nobody": members must be existing users (create them first)'],
                  }),
            ),
          }),
        },
      },
      authz: {
        authz: { checkPermission: async ({ userId }) => ({ allowed: userId === USERS.root.id, dependsOn: [] }) },
      },
    });
    ({ base, close } = await startTestGateway(backends.env));
  });
  beforeEach(() => backends.reset());
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const post = async (who: string | undefined, body: unknown) => {
    const res = await fetch(`${base}/api/v1/admin/orgs/import`, {
      method: 'POST',
      headers: { ...(who ? { authorization: `token ${who}` } : {}), 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const imports = () => backends.orgsTeams.callsTo('organizations', 'importOrgs');

  it('answers 401 without a token and 403 to a user who is not a site admin, asking orgs-teams nothing', async () => {
    expect((await post(undefined, { organizations: [ACME] })).status).toBe(401);
    expect((await post('olivia', { organizations: [ACME] })).status).toBe(403);
    expect(backends.authz.callsTo('authz', 'checkPermission').at(-1)).toMatchObject({ userId: USERS.olivia.id, permission: 'admin:site' });
    expect(imports()).toEqual([]);
  });

  it.each([
    ['no organizations', {}],
    ['an empty batch', { organizations: [] }],
    ['a name that is not a string', { organizations: [{ name: 5 }] }],
    ['members that are not a list', { organizations: [{ name: 'x', teams: [{ name: 't', members: 'mia' }] }] }],
    ['an unknown visibility', { organizations: [{ name: 'x', visibility: 'secret' }] }],
    ['a body that is not JSON', '{"organizations": ['],
  ])('answers 422 for %s, asking orgs-teams nothing', async (_what, body) => {
    const res = await post('root', body);
    expect([res.status, res.body.message]).toEqual([422, expect.any(String)]);
    expect(imports()).toEqual([]);
  });

  it('hands the batch on as sent, with its defaults, and answers what became of each organization in order', async () => {
    const res = await post('root', { organizations: [ACME, { name: 'globex', teams: [{ name: 'devs', members: ['mia', 'nobody'] }] }] });
    expect(res).toEqual({
      status: 200,
      body: {
        results: [
          {
            name: 'acme',
            outcome: 'created',
            id: 10,
            created: { orgs: 1, teams: 3, memberships: 3, roles: 1, role_assignments: 1 },
            existing: { orgs: 0, teams: 0, memberships: 0, roles: 0, role_assignments: 0 },
            errors: [],
          },
          {
            name: 'globex',
            outcome: 'refused',
            id: 0,
            created: { orgs: 0, teams: 0, memberships: 0, roles: 0, role_assignments: 0 },
            existing: { orgs: 0, teams: 0, memberships: 0, roles: 0, role_assignments: 0 },
            errors: ['no user named "nobody": members must be existing users (create them first)'],
          },
        ],
      },
    });
    expect(imports()).toEqual([
      {
        requesterId: USERS.root.id,
        orgs: [
          {
            name: 'acme',
            fullName: 'Acme Inc.',
            description: '',
            website: '',
            location: '',
            visibility: '',
            owners: ['olivia'],
            teams: [
              { name: 'devs', description: '', permission: '', type: '', members: ['mia'], roles: ['editors'] },
              { name: 'ops', description: '', permission: 'write', type: '', members: ['nora'], roles: [] },
            ],
            roles: [{ name: 'editors', description: 'edit the organization', permissions: [{ namespace: 'org', action: 'edit' }] }],
          },
          expect.objectContaining({
            name: 'globex',
            owners: [],
            roles: [],
            teams: [expect.objectContaining({ members: ['mia', 'nobody'] })],
          }),
        ],
      },
    ]);
  });
});
