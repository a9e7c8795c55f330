import { DomainError } from '@platform/errors';
import { authzRolesV1, authzV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { authzApp } from '../app';

// A custom role assigned to a team until a time, over real gRPC and the embedded engine: it grants until then and
// not after, at authz's clock (a caller's context cannot move it back), and it is shown with its end.

const t = (user: string, relation: string, object: string) => ({ user, relation, object });
const status = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof DomainError ? `${err.httpStatus} ${err.message}` : err),
  );

describe('time-bound team roles', () => {
  let app: AppUnderTest;
  let authz: PromiseClient<typeof authzV1.AuthzServiceService>;
  let roles: PromiseClient<typeof authzRolesV1.RolesServiceService>;
  let role: number;
  const may = async (user: number) => (await authz.checkPermission({ userId: user, permission: 'edit:org', objectId: 1 })).allowed;
  const assignment = async () => (await authz.readTuples({ object: `role:${role}`, relation: 'assignee', user: '' })).tuples;

  // Organization 1 (owner 10), team 11 with member 21; the role Editors carries edit:org.
  beforeAll(async () => {
    app = await startAppForTest(authzApp);
    authz = createClient(authzV1.AuthzServiceService, app.address, { name: 'authz' });
    roles = createClient(authzRolesV1.RolesServiceService, app.address, { name: 'authz' });
    await authz.writeTuples({
      writes: [
        t('site:platform', 'site', 'organization:1'),
        t('user:10', 'owner', 'organization:1'),
        t('organization:1', 'organization', 'team:11'),
        t('user:21', 'member', 'team:11'),
      ],
      deletes: [],
    });
    role = (
      await roles.createRole({
        orgId: 1,
        name: 'Editors',
        description: '',
        permissions: [{ namespace: 'org', action: 'edit' }],
        teamIds: [],
      })
    ).id;
  });
  afterAll(async () => {
    authz?.close();
    roles?.close();
    await app?.stop();
  });

  it('refuses an end in the past, one that is not a time, and one for a role not given, changing nothing', async () => {
    const assign = (until: Record<number, string>) =>
      status(roles.assignTeamRoles({ teamId: 11, orgId: 1, roleIds: [role], until: { until } }));
    expect(await assign({ [role]: '2020-01-01T00:00:00Z' })).toBe(`400 until of role ${role} must be in the future`);
    expect(await assign({ [role]: 'next week' })).toBe(`400 until of role ${role} must be an RFC 3339 time, not 'next week'`);
    expect(await assign({ [role + 1]: '2099-01-01T00:00:00Z' })).toBe(
      `400 until names role ${role + 1}, which is not among the roles given`,
    );
    expect(await assignment()).toEqual([]);
    expect(await may(21)).toBe(false);
  });

  it('grants until its end and not after, whatever time a caller claims, and is listed with its end', async () => {
    const until = new Date(Date.now() + 2_500).toISOString();
    expect((await roles.assignTeamRoles({ teamId: 11, orgId: 1, roleIds: [role], until: { until: { [role]: until } } })).roleIds).toEqual([
      role,
    ]);
    expect(await assignment()).toEqual([
      {
        ...t('team:11#member', 'assignee', `role:${role}`),
        condition: { name: 'not_after', contextJson: JSON.stringify({ expires_at: until }) },
      },
    ]);
    expect(await may(21)).toBe(true);
    const listed = await roles.listTeamRoles({ teamIds: [11] });
    expect(listed.teamRoles[11].roleIds).toEqual([role]);
    expect(listed.teamRolesUntil[11].until).toEqual({ [role]: until });
    const who = await authz.whoHasAccess({ object: 'organization:1' });
    const edit = who.permissions.find((p) => p.relation === 'edit')!;
    expect(edit.users.find((u) => u.userId === 21)!.paths).toEqual([{ kind: 'role', teamId: 11, roleId: role, until }]);

    await new Promise((resolve) => setTimeout(resolve, Date.parse(until) - Date.now() + 200));
    expect(await may(21)).toBe(false);
    const claimed = {
      tuple: t('user:21', 'edit', 'organization:1'),
      contextualTuples: [],
      contextJson: JSON.stringify({ current_time: '2000-01-01T00:00:00Z' }),
    };
    expect((await authz.check(claimed)).allowed).toBe(false);
    // Ended: nobody holds edit:org through the team any more, and the view no longer offers that path.
    const after = await authz.whoHasAccess({ object: 'organization:1' });
    expect(after.permissions.find((p) => p.relation === 'edit')!.users.map((u) => u.userId)).toEqual([10]);
  });

  it('moves the end, and makes it permanent, by assigning again', async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await roles.assignTeamRoles({ teamId: 11, orgId: 1, roleIds: [role], until: { until: { [role]: later } } });
    expect(await may(21)).toBe(true);
    expect((await assignment())[0].condition).toEqual({ name: 'not_after', contextJson: JSON.stringify({ expires_at: later }) });
    await roles.assignTeamRoles({ teamId: 11, orgId: 1, roleIds: [role] });
    expect(await assignment()).toEqual([t('team:11#member', 'assignee', `role:${role}`)]);
    expect((await roles.listTeamRoles({ teamIds: [11] })).teamRolesUntil).toEqual({});
    expect(await may(21)).toBe(true);
  });

  it('keeps a team’s end when the role is edited with its teams', async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await roles.assignTeamRoles({ teamId: 11, orgId: 1, roleIds: [role], until: { until: { [role]: later } } });
    await roles.updateRole({ orgId: 1, id: role, name: 'Editors', teamIds: { teamIds: [11] } });
    expect((await assignment())[0].condition?.name).toBe('not_after');
    expect((await roles.listTeamRoles({ teamIds: [11] })).teamRolesUntil[11].until).toEqual({ [role]: later });
  });
});
