import { orgsTeamsImportV1, orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';

// The import of organizations in bulk (docs/import.md) against a stand-in authz that keeps tuples as OpenFGA does:
// an imported organization reads and is tupled as one made call by call; each organization is written whole or
// refused whole; the same batch again changes nothing; a batch cut short by authz going down completes.

type ImportedOrg = orgsTeamsImportV1.ImportedOrg;
type ImportedTeam = orgsTeamsImportV1.ImportedTeam;

const team = (name: string, members: string[], extra: Partial<ImportedTeam> = {}): ImportedTeam => ({
  name,
  description: '',
  permission: '',
  type: '',
  members,
  roles: [],
  ...extra,
});
const org = (name: string, extra: Partial<ImportedOrg> = {}): ImportedOrg => ({
  name,
  fullName: '',
  description: '',
  website: '',
  location: '',
  visibility: '',
  owners: ['alice'],
  teams: [team('devs', ['bob', 'carol']), team('ops', ['carol'])],
  roles: [],
  ...extra,
});

describe('OrganizationsService.ImportOrgs', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  const users: Record<string, number> = {};
  const importOrgs = (batch: ImportedOrg[]) => orgs.importOrgs({ orgs: batch, requesterId: users.root });
  const has = (user: string, relation: string, object: string) => authz.tuples.has(`${user} ${relation} ${object}`);

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      OUTBOX_RELAY_INTERVAL_MS: '200',
    });
    orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, app.address, { name: 'orgs-teams' });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    users.root = (await identity.getUser({ id: 0, login: 'root' })).id;
    for (const login of ['alice', 'bob', 'carol']) {
      const u = await identity.createUser({
        username: login,
        email: `${login}@example.com`,
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      });
      users[login] = u.id;
    }
  });
  afterAll(async () => {
    orgs?.close();
    identity?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  it('imports organizations that read and are tupled as ones created call by call', async () => {
    const { results } = await importOrgs([org('acme', { fullName: 'Acme Inc.', visibility: 'private' }), org('globex', { owners: [] })]);
    expect(results.map((r) => [r.name, r.outcome, r.errors])).toEqual([
      ['acme', 'created', []],
      ['globex', 'created', []],
    ]);
    expect(results[0].created).toEqual({ orgs: 1, teams: 3, memberships: 4, roles: 0, roleAssignments: 0 });

    const acme = await orgs.getOrg({ name: 'acme', viewerId: users.root });
    expect(acme).toMatchObject({ id: results[0].orgId, fullName: 'Acme Inc.', visibility: 'private' });
    const { teams } = await orgs.listTeams({ orgId: acme.id });
    expect(teams.map((t) => [t.name, t.permission, t.type])).toEqual([
      ['Owners', 'owner', 'general'],
      ['devs', 'read', 'general'],
      ['ops', 'read', 'general'],
    ]);
    const [owners, devs, ops] = teams;
    expect((await orgs.listTeamMembers({ teamId: devs.id })).members.map((m) => m.login)).toEqual(['bob', 'carol']);
    const members = await orgs.listMembers({ orgId: acme.id, viewerId: users.root, publicOnly: false });
    expect(members.members.map((m) => m.login)).toEqual(['alice', 'bob', 'carol']);
    expect(await orgs.getOrgPermissions({ orgId: acme.id, userId: users.alice, username: '' })).toMatchObject({ isOwner: true });

    // The tuples POST /orgs, POST /orgs/{org}/teams and PUT /teams/{id}/members/{user} write.
    expect(has('site:platform', 'site', `organization:${acme.id}`)).toBe(true);
    for (const t of teams) {
      expect(has(`organization:${acme.id}`, 'organization', `team:${t.id}`)).toBe(true);
      expect(has(`team:${t.id}#member`, 'member', `organization:${acme.id}`)).toBe(true);
    }
    expect(has(`team:${owners.id}#member`, 'owner', `organization:${acme.id}`)).toBe(true);
    expect(has(`user:${users.alice}`, 'member', `team:${owners.id}`)).toBe(true);
    expect(has(`user:${users.carol}`, 'member', `team:${ops.id}`)).toBe(true);

    // No owners named: the requester owns it, as POST /orgs makes its creator the owner.
    const globex = await orgs.getOrg({ name: 'globex', viewerId: users.root });
    expect(await orgs.getOrgPermissions({ orgId: globex.id, userId: users.root, username: '' })).toMatchObject({ isOwner: true });
  });

  it('changes nothing when the same batch comes again, and reports everything as existing', async () => {
    const tuples = new Set(authz.tuples.keys());
    const writes = authz.state.writes;
    const { results } = await importOrgs([org('acme', { fullName: 'Acme Inc.', visibility: 'private' }), org('globex', { owners: [] })]);
    expect(results.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(results[0].created).toEqual({ orgs: 0, teams: 0, memberships: 0, roles: 0, roleAssignments: 0 });
    expect(results[0].existing).toEqual({ orgs: 1, teams: 3, memberships: 4, roles: 0, roleAssignments: 0 });
    expect(new Set(authz.tuples.keys())).toEqual(tuples);
    expect(authz.state.writes).toBe(writes);
  });

  it('completes an existing organization with what the file adds, keeping what is there', async () => {
    const { results } = await importOrgs([org('acme', { teams: [team('devs', ['bob', 'alice']), team('qa', ['bob'])] })]);
    expect(results[0]).toMatchObject({
      outcome: 'completed',
      created: { orgs: 0, teams: 1, memberships: 2, roles: 0, roleAssignments: 0 },
      existing: { orgs: 1, teams: 2, memberships: 2, roles: 0, roleAssignments: 0 },
    });
    const acme = await orgs.getOrg({ name: 'acme', viewerId: users.root });
    expect((await orgs.listTeams({ orgId: acme.id })).teams.map((t) => t.name)).toEqual(['Owners', 'devs', 'ops', 'qa']);
  });

  it('refuses a bad organization whole, naming each fault, and imports the others of the batch', async () => {
    const { results } = await importOrgs([
      org('initech', { teams: [team('devs', ['bob', 'nobody', 'ghost'])] }),
      org('bad name!'),
      org('hooli', { teams: [team('Owners', []), team('x', [], { permission: 'owner' }), team('y', [], { roles: ['missing'] })] }),
      org('alice'),
      org('umbrella'),
      org('UMBRELLA'),
    ]);
    expect(results.map((r) => [r.name, r.outcome])).toEqual([
      ['initech', 'refused'],
      ['bad name!', 'refused'],
      ['hooli', 'refused'],
      ['alice', 'refused'],
      ['umbrella', 'created'],
      ['UMBRELLA', 'refused'],
    ]);
    expect(results[0].errors).toEqual(['no user named "nobody", "ghost": members must be existing users (create them first)']);
    expect(results[1].errors[0]).toMatch(/^name "bad name!"/);
    expect(results[2].errors).toEqual([
      'team "Owners": the owner team is made by the import; list its members in owners',
      'team "x": permission "owner" is not one of read, write, admin',
      'team "y": role "missing" is not among the organization\'s roles',
    ]);
    expect(results[3].errors).toEqual(['name "alice": already taken by a user']);
    expect(results[5].errors).toEqual(['name "UMBRELLA": already given at position 5 of this batch']);
    for (const name of ['initech', 'hooli']) {
      await expect(orgs.getOrg({ name, viewerId: users.root })).rejects.toMatchObject({ kind: 'not-found' });
    }
    expect(results[0].orgId).toBe(0);
  });

  it('creates custom roles with the teams that name them, as POST /authz/roles does, and refuses unknown permissions', async () => {
    const roles = [{ name: 'deployers', description: 'ship it', permissions: [{ namespace: 'team', action: 'add' }] }];
    const withRoles = org('wayne', { teams: [team('devs', ['bob'], { roles: ['Deployers'] }), team('ops', ['carol'])], roles });
    const first = await importOrgs([withRoles]);
    expect(first.results[0]).toMatchObject({ outcome: 'created', errors: [], created: { roles: 1, roleAssignments: 1 } });
    const wayne = await orgs.getOrg({ name: 'wayne', viewerId: users.root });
    const devs = (await orgs.listTeams({ orgId: wayne.id })).teams.find((t) => t.name === 'devs')!;
    expect(authz.state.calls).toContain(`create role deployers of ${wayne.id} [${devs.id}]`);

    // Again, with ops now naming the role too: the role exists, and only the missing assignment is made.
    const again = await importOrgs([
      { ...withRoles, teams: [team('devs', ['bob'], { roles: ['deployers'] }), team('ops', ['carol'], { roles: ['deployers'] })] },
    ]);
    expect(again.results[0]).toMatchObject({
      outcome: 'completed',
      created: { roles: 0, roleAssignments: 1 },
      existing: { roles: 1, roleAssignments: 1 },
    });

    const bad = await importOrgs([
      org('stark', { roles: [{ name: 'r', description: '', permissions: [{ namespace: 'site_admin', action: 'all' }] }] }),
    ]);
    expect(bad.results[0]).toMatchObject({
      outcome: 'refused',
      errors: ['role "r": permission site_admin/all is unknown or cannot be assigned to a custom role'],
    });
  });

  it('imports an organization two batches bring at once only once: the later one finds it there', async () => {
    const [a, b] = await Promise.all([importOrgs([org('oscorp')]), importOrgs([org('oscorp')])]);
    expect([a.results[0].outcome, b.results[0].outcome].sort()).toEqual(['created', 'unchanged']);
    expect(a.results[0].orgId).toBe(b.results[0].orgId);
    const oscorp = await orgs.getOrg({ name: 'oscorp', viewerId: users.root });
    expect((await orgs.listTeams({ orgId: oscorp.id })).teams.map((t) => t.name)).toEqual(['Owners', 'devs', 'ops']);
  });

  it('completes a batch whose tuples could not be written: its rows stand, the relay writes them, the batch again finds all there', async () => {
    authz.state.failWrites = true;
    let cut: orgsTeamsImportV1.ImportOrgsResponse;
    try {
      cut = await importOrgs([org('cyberdyne'), org('tyrell')]);
    } finally {
      authz.state.failWrites = false;
    }
    expect(cut.results.map((r) => r.outcome)).toEqual(['created', 'created']);
    const again = await importOrgs([org('cyberdyne'), org('tyrell'), org('soylent')]);
    expect(again.results.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged', 'created']);
    const tyrell = await orgs.getOrg({ name: 'tyrell', viewerId: users.root });
    const ops = (await orgs.listTeams({ orgId: tyrell.id })).teams.find((t) => t.name === 'ops')!;
    await eventually(async () => has(`user:${users.carol}`, 'member', `team:${ops.id}`));
    expect(has('site:platform', 'site', `organization:${tyrell.id}`)).toBe(true);
  });
});
