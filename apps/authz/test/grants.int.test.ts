import { DomainError } from '@platform/errors';
import { authzRolesV1, authzV1 } from '@platform/proto';
import { createClient, type PromiseClient } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { authzApp } from '../src/app';

// RolesService.CheckGrant over real gRPC, real Postgres and the embedded engine: no one gives more than they hold
// (docs/authorization.md). The answer names the permissions a change would give that the user does not hold on
// the organization — given as such, through roles, or through the roles of teams.

type Authz = PromiseClient<typeof authzV1.AuthzServiceService>;
type Roles = PromiseClient<typeof authzRolesV1.RolesServiceService>;

const t = (user: string, relation: string, object: string) => ({ user, relation, object });
const perm = (namespace: string, action: string) => ({ namespace, action });
const EDIT_ORG = perm('org', 'edit');
const CREATE_ROLE = perm('org', 'create_role');
const LIST_BUS_TOKENS = perm('bus-token', 'list');
const EDIT_TEAM = perm('team', 'edit');
const VIEW_TEAM = perm('team', 'view');

describe('RolesService.CheckGrant', () => {
  let app: AppUnderTest;
  let authz: Authz;
  let roles: Roles;
  let editor: number;
  let powerful: number;
  let foreign: number;
  const missing = async (userId: number, over: Partial<authzRolesV1.CheckGrantRequest> = {}) =>
    (await roles.checkGrant({ userId, orgId: 1, permissions: [], roleIds: [], teamIds: [], ...over })).missing;

  // Organization 1: owner 10 (owner team 100); team 11 with member 21, who holds edit:team through role `editor`;
  // team 12 with member 22 and no role; team 13 carries `powerful`, no members. Site admin 99. Organization 2:
  // owner 30, team 31, role `foreign` carrying edit:org.
  beforeAll(async () => {
    app = await startAppForTest(authzApp, {});
    authz = createClient(authzV1.AuthzServiceService, app.address, { name: 'authz' });
    roles = createClient(authzRolesV1.RolesServiceService, app.address, { name: 'authz' });
    const writes = [t('user:99', 'admin', 'site:platform')];
    for (const [org, owner, teams] of [
      [1, 10, [11, 12, 13]],
      [2, 30, [31]],
    ] as const) {
      writes.push(
        t('site:platform', 'site', `organization:${org}`),
        t(`organization:${org}`, 'organization', `team:${org * 100}`),
        t(`user:${owner}`, 'member', `team:${org * 100}`),
        t(`team:${org * 100}#member`, 'owner', `organization:${org}`),
        t(`team:${org * 100}#member`, 'member', `organization:${org}`),
      );
      for (const team of teams)
        writes.push(t(`organization:${org}`, 'organization', `team:${team}`), t(`team:${team}#member`, 'member', `organization:${org}`));
    }
    writes.push(t('user:21', 'member', 'team:11'), t('user:22', 'member', 'team:12'));
    await authz.writeTuples({ writes, deletes: [] });
    const create = async (orgId: number, name: string, permissions: { namespace: string; action: string }[], teamIds: number[]) =>
      (await roles.createRole({ orgId, name, description: '', permissions, teamIds })).id;
    editor = await create(1, 'editor', [EDIT_TEAM, VIEW_TEAM], [11]);
    powerful = await create(1, 'powerful', [EDIT_ORG, CREATE_ROLE, LIST_BUS_TOKENS], [13]);
    foreign = await create(2, 'foreign', [EDIT_ORG], [31]);
  });
  afterAll(async () => {
    authz?.close();
    roles?.close();
    await app?.stop();
  });

  it('names the permissions the user lacks, in catalog order, each once', async () => {
    expect(await missing(21, { permissions: [LIST_BUS_TOKENS, EDIT_TEAM, EDIT_ORG, EDIT_ORG] })).toEqual(['edit:org', 'list:bus-token']);
    expect(await missing(21, { permissions: [EDIT_TEAM, VIEW_TEAM] })).toEqual([]);
    // Membership alone holds what every member holds (viewing teams and roles).
    expect(await missing(22, { permissions: [VIEW_TEAM, perm('role', 'view')] })).toEqual([]);
    expect(await missing(22, { permissions: [EDIT_TEAM] })).toEqual(['edit:team']);
  });

  it('counts every permission of the roles named and of the roles the teams named carry', async () => {
    expect(await missing(21, { roleIds: [powerful] })).toEqual(['edit:org', 'create_role:org', 'list:bus-token']);
    expect(await missing(21, { roleIds: [editor] })).toEqual([]);
    expect(await missing(21, { roleIds: [editor, powerful] })).toEqual(['edit:org', 'create_role:org', 'list:bus-token']);
    expect(await missing(21, { teamIds: [13] })).toEqual(['edit:org', 'create_role:org', 'list:bus-token']);
    expect(await missing(22, { teamIds: [11] })).toEqual(['edit:team']);
    // A team without roles gives nothing.
    expect(await missing(22, { teamIds: [12] })).toEqual([]);
    expect(await missing(22, { permissions: [CREATE_ROLE], roleIds: [editor], teamIds: [13] })).toEqual([
      'edit:org',
      'create_role:org',
      'edit:team',
      'list:bus-token',
    ]);
  });

  it('lets owners and site admins give anything; not owners of another organization', async () => {
    const everything = {
      permissions: [EDIT_ORG, CREATE_ROLE, EDIT_TEAM, perm('team-member', 'add')],
      roleIds: [powerful],
      teamIds: [11, 13],
    };
    expect(await missing(10, everything)).toEqual([]);
    expect(await missing(99, everything)).toEqual([]);
    expect(await missing(30, { roleIds: [powerful] })).toEqual(['edit:org', 'create_role:org', 'list:bus-token']);
  });

  it('follows the grants: a role given to the user’s team counts from the next call', async () => {
    expect(await missing(22, { roleIds: [powerful] })).toHaveLength(3);
    await roles.assignTeamRoles({ teamId: 12, orgId: 1, roleIds: [powerful] });
    expect(await missing(22, { roleIds: [powerful] })).toEqual([]);
    await roles.assignTeamRoles({ teamId: 12, orgId: 1, roleIds: [] });
    expect(await missing(22, { roleIds: [powerful] })).toHaveLength(3);
  });

  it('leaves out what the write itself refuses: roles of another organization, unknown roles, unassignable pairs', async () => {
    expect(await missing(21, { roleIds: [foreign, 999999] })).toEqual([]);
    // Team 31 is organization 2's: its role does not count in organization 1.
    expect(await missing(21, { teamIds: [31] })).toEqual([]);
    expect(await missing(21, { permissions: [perm('org', 'fly'), perm('org', 'delete'), perm('site_admin', 'view_contracts')] })).toEqual(
      [],
    );
    expect(await missing(21)).toEqual([]);
  });

  it('answers 400 for ids that are not positive integers or over-long permission parts', async () => {
    const status = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (err: unknown) => (err instanceof DomainError ? err.httpStatus : err),
      );
    expect(await status(roles.checkGrant({ userId: 0, orgId: 1, permissions: [], roleIds: [], teamIds: [] }))).toBe(400);
    expect(await status(roles.checkGrant({ userId: 21, orgId: 0, permissions: [], roleIds: [], teamIds: [] }))).toBe(400);
    expect(await status(roles.checkGrant({ userId: 21, orgId: 1, permissions: [], roleIds: [-1], teamIds: [] }))).toBe(400);
    expect(await status(roles.checkGrant({ userId: 21, orgId: 1, permissions: [], roleIds: [], teamIds: [0] }))).toBe(400);
    const long = perm('org', 'x'.repeat(65));
    expect(await status(roles.checkGrant({ userId: 21, orgId: 1, permissions: [long], roleIds: [], teamIds: [] }))).toBe(400);
    // A 100,000-character namespace (a custom role's body, checked before the role is made) is named with its limit.
    const huge = await roles
      .checkGrant({ userId: 21, orgId: 1, permissions: [perm('o'.repeat(100_000), 'edit')], roleIds: [], teamIds: [] })
      .catch((e) => e);
    expect(huge).toMatchObject({ httpStatus: 400, message: 'permissions[].namespace: at most 64 characters' });
  });
});
