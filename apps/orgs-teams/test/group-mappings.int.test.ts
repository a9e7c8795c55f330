import knexFactory, { type Knex } from 'knex';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { orgRequest } from './orgs-teams-under-test';

// Groups to teams at sign-in through the identity provider: mapped teams joined and left as the groups change, teams
// without a mapping untouched, site admin following the site-wide mapping, each change audited.

describe('groups to teams at single sign-on', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let sql: Knex;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let orgId: number;
  let platformTeam: number;
  let handTeam: number;

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(orgsTeamsApp, {
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      OUTBOX_RELAY_INTERVAL_MS: '200',
    });
    sql = knexFactory({ client: 'pg', connection: app.databaseUrl });
    orgs = createClient(orgsTeamsOrgsV1.OrganizationsServiceService, app.address, { name: 'orgs-teams' });
    identity = createClient(orgsTeamsV1.OrgsTeamsServiceService, app.address, { name: 'orgs-teams' });
    const root = await identity.getUser({ id: 0, login: 'root' });
    const org = await orgs.createOrg(orgRequest(root.id, 'acme'));
    orgId = org.id;
    // Rows made directly: the sync only needs the teams to exist, and creating them through the API also asks authz
    // for roles, which this test does not exercise.
    const team = async (name: string) =>
      Number(
        (await sql('identity.teams').insert({ org_id: orgId, name, lower_name: name, permission: 'read', type: 'general' }, ['id']))[0].id,
      );
    platformTeam = await team('platform');
    handTeam = await team('by-hand');
    await sql('identity.group_mappings').insert([
      { org_id: orgId, group_value: 'platform-eng', team_id: platformTeam },
      { org_id: null, group_value: 'idp-admins', site_admin: true },
    ]);
  });
  afterAll(async () => {
    orgs?.close();
    identity?.close();
    await sql?.destroy();
    await app?.stop();
    await authz?.server.shutdown(100);
  });

  const signIn = (groups: string[]) =>
    identity.signInExternal({
      issuer: 'https://idp.example',
      subject: 'dana-1',
      username: 'dana',
      email: 'dana@example.com',
      emailVerified: true,
      fullName: 'Dana',
      groups,
      userAgent: 'test',
      address: '127.0.0.1',
    });
  const teamsOf = async (login: string) =>
    (await sql('identity.team_users as m').join('identity.accounts as a', 'a.id', 'm.uid').where('a.login', login).pluck('m.team_id'))
      .map(Number)
      .sort();
  const isAdmin = async (login: string) => (await sql('identity.accounts').where({ login }).first('is_admin')).is_admin as boolean;

  it('joins the mapped team and site admin the groups name, and leaves them when the groups change, keeping teams given by hand', async () => {
    // An account linked at the first sign-in by its verified e-mail.
    const dana = await identity.createUser({
      username: 'dana',
      email: 'dana@example.com',
      password: 'password1',
      fullName: '',
      mustChangePassword: false,
      isAdmin: false,
    });
    await signIn(['platform-eng', 'idp-admins', 'unmapped']);
    expect(await teamsOf('dana')).toEqual([platformTeam]);
    expect(await isAdmin('dana')).toBe(true);
    await eventually(async () => authz.tuples.has(`user:${dana.id} member team:${platformTeam}`));

    await orgs.addTeamMember({ teamId: handTeam, userId: dana.id, username: '', conflictIfMember: false });

    await signIn(['unmapped']);
    expect(await teamsOf('dana')).toEqual([handTeam]);
    expect(await isAdmin('dana')).toBe(false);
    await eventually(async () => !authz.tuples.has(`user:${dana.id} member team:${platformTeam}`));

    const actions = await sql('identity.audit_events').where({ actor_login: 'dana' }).orderBy('at').pluck('action');
    expect(actions.sort()).toEqual(
      ['groupSyncAddTeamMember', 'groupSyncGrantSiteAdmin', 'groupSyncRemoveTeamMember', 'groupSyncRevokeSiteAdmin'].sort(),
    );
  });

  it('keeps an organization\'s mappings to its own teams and the site-wide ones to site admin, refusing duplicates', async () => {
    const other = await orgs.createOrg(orgRequest((await identity.getUser({ id: 0, login: 'root' })).id, 'globex'));
    const created = await identity.createGroupMapping({ orgId, group: 'sre', teamId: handTeam });
    expect(created).toMatchObject({ orgId, group: 'sre', teamId: handTeam, teamName: 'by-hand', siteAdmin: false });
    await expect(identity.createGroupMapping({ orgId, group: 'sre', teamId: handTeam })).rejects.toMatchObject({ kind: 'conflict' });
    // The same group may name another team.
    await identity.createGroupMapping({ orgId, group: 'sre', teamId: platformTeam });
    // Another organization's team is refused as an unknown one; so is a group without a value.
    await expect(identity.createGroupMapping({ orgId: other.id, group: 'sre', teamId: handTeam })).rejects.toMatchObject({
      kind: 'validation',
    });
    await expect(identity.createGroupMapping({ orgId, group: ' ', teamId: handTeam })).rejects.toMatchObject({ kind: 'validation' });
    await expect(identity.createGroupMapping({ orgId: 999999, group: 'sre', teamId: handTeam })).rejects.toMatchObject({ kind: 'not-found' });

    const listed = (await identity.listGroupMappings({ orgId })).mappings.map((m) => [m.group, m.teamName]);
    expect(listed).toEqual([
      ['platform-eng', 'platform'],
      ['sre', 'by-hand'],
      ['sre', 'platform'],
    ]);
    expect((await identity.listGroupMappings({ orgId: other.id })).mappings).toEqual([]);

    // Site-wide: a group maps to site admin once; a team is not named there.
    const admins = await identity.createGroupMapping({ orgId: 0, group: 'ops-admins', teamId: 0 });
    expect(admins).toMatchObject({ orgId: 0, teamId: 0, siteAdmin: true });
    await expect(identity.createGroupMapping({ orgId: 0, group: 'ops-admins', teamId: 0 })).rejects.toMatchObject({ kind: 'conflict' });
    await expect(identity.createGroupMapping({ orgId: 0, group: 'x', teamId: handTeam })).rejects.toMatchObject({ kind: 'validation' });
    expect((await identity.listGroupMappings({ orgId: 0 })).mappings.map((m) => m.group)).toEqual(['idp-admins', 'ops-admins']);

    // A mapping is deleted only through its own organization (or the site-wide list for a site-wide one).
    await expect(identity.deleteGroupMapping({ orgId: other.id, id: created.id })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(identity.deleteGroupMapping({ orgId: 0, id: created.id })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(identity.deleteGroupMapping({ orgId, id: admins.id })).rejects.toMatchObject({ kind: 'not-found' });
    await identity.deleteGroupMapping({ orgId, id: created.id });
    await identity.deleteGroupMapping({ orgId: 0, id: admins.id });
    expect((await identity.listGroupMappings({ orgId })).mappings).toHaveLength(2);
    expect((await identity.listGroupMappings({ orgId: 0 })).mappings).toHaveLength(1);
  });
});
