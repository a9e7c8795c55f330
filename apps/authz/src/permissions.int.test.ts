import { InputError } from '@platform/errors';
import { TypeSystem } from './engine/model';
import { openEngineDatabase } from './engine/test/engine-db';
import type { EmbeddedEngine } from './engine/embedded-engine';
import {
  PERMISSIONS,
  SITE_OBJECT,
  isAssignable,
  permissionCatalog,
  permissionsOn,
  resolvePermission,
  roleGrantTuples,
  type Permission,
} from './permissions';

const model = TypeSystem.fromFile();

// Every `action:object` name the spec uses, in every area of the API.
const SPEC_NAMES = [
  // Not in the spec: the Gitea-compatible admin routes (POST /admin/users) check it.
  'admin:site',
  // Not in the spec: enrolling a hub cluster (POST /orgs/{org}/clusters, docs/clusters.md).
  'create:cluster',
  'access:org',
  'manage_owners:org',
  // Not an `action:object` name of the spec: its "org membership required" (the member relation).
  'member:org',
  'edit:org',
  'delete:org',
  'admin:org',
  'create_role:org',
  'edit_branding_options:org',
  'view:role',
  'edit:role',
  'delete:role',
  'viewer:role',
  'view:team',
  'edit:team',
  'delete:team',
  'list:team',
  'create:team',
  'join:team',
  'leave:team',
  'remove:team',
  'add:team',
  'add:team-member',
  'remove:team-member',
  'list:team-members',
  'view:team-member',
  'view:avatar',
  'update:avatar',
  'delete:avatar',
  'view:sync-token',
  'create:manager-org-sync-token',
  'remove:manager-sync-token',
  'list:access-token',
  'delete:access-token',
  'list:bus-token',
  'revoke:bus-token',
  'view_contracts:site_admin',
  'create_contracts:site_admin',
  'update_contracts:site_admin',
  'delete_contracts:site_admin',
  'extend_contracts:site_admin',
  'revoke_contracts:site_admin',
  'add_cluster:site_admin',
  'remove_cluster:site_admin',
  'issue_license:site_admin',
  'update_cluster_name:site_admin',
  'update_cluster_tags:site_admin',
  'view_usage_analytics:site_admin',
  'view_licensed_users:site_admin',
  'view_system_outages:site_admin',
  'view_marketplace_usage:site_admin',
  'edit_allowed_domains:site_admin',
  'update_user_registration:site_admin',
  'view_contracts:contract_mgmt',
  'add_cluster:contract_mgmt',
  'updated_preferences:contracts',
  'issue-license:cluster',
  'Organization_SiteAdminCanViewClientOrg',
  'Organization_SiteAdminCanCreateClientOrg',
  'Organization_SiteAdminCanAddClusterToClientOrg',
  'Organization_SiteAdminCanRemoveClusterFromClientOrg',
  'Organization_SiteAdminCanDeleteClientOrg',
];

const acceptsRoleAssignee = (relation: string) => model.accepts('organization', relation, { type: 'role', id: '1', relation: 'assignee' });

describe('the permission table and the model', () => {
  it('names every permission of the spec exactly once', () => {
    expect(new Set(PERMISSIONS.map((p) => p.name)).size).toBe(PERMISSIONS.length);
    expect(PERMISSIONS.map((p) => p.name).sort()).toEqual([...SPEC_NAMES].sort());
  });

  it.each(PERMISSIONS.map((p) => [p.name, p] as const))('%s names a relation its type defines', (_name, p) => {
    expect(model.relationsOf(p.objectType)).toContain(p.relation);
  });

  it('grants of assignable permissions are organization relations a role can be given', () => {
    for (const p of PERMISSIONS.filter((p) => p.assignable)) {
      expect([p.name, acceptsRoleAssignee(p.grant!)]).toEqual([p.name, true]);
    }
  });

  it('every organization relation a role can be given is the grant of some permission', () => {
    const grants = new Set(PERMISSIONS.map((p) => p.grant));
    const grantable = model.relationsOf('organization').filter(acceptsRoleAssignee);
    expect(grantable.filter((r) => !grants.has(r))).toEqual([]);
  });

  it('an unassignable organization permission cannot be given to a role in the model either', () => {
    for (const p of PERMISSIONS.filter((p) => !p.assignable && p.objectType === 'organization')) {
      expect([p.name, acceptsRoleAssignee(p.relation)]).toEqual([p.name, false]);
    }
  });

  it('site-admin permissions live on the site and are never assignable', () => {
    for (const p of PERMISSIONS.filter((p) => p.namespace === 'site_admin' || p.namespace === 'Organization')) {
      expect([p.name, p.objectType, p.assignable]).toEqual([p.name, 'site', false]);
    }
  });
});

describe('lookups', () => {
  it('resolves a name to its type and relation', () => {
    expect(resolvePermission('create_role:org')).toEqual({ objectType: 'organization', relation: 'create_role' });
    expect(resolvePermission('add:team-member')).toEqual({ objectType: 'team', relation: 'add_member' });
    expect(resolvePermission('issue-license:cluster')).toEqual({ objectType: 'cluster', relation: 'issue_license' });
    expect(resolvePermission('Organization_SiteAdminCanViewClientOrg')).toEqual({ objectType: 'site', relation: 'view_client_org' });
    expect(() => resolvePermission('fly:org')).toThrow(InputError);
  });

  it('the catalog holds exactly the assignable permissions, and their associations point into it', () => {
    const catalog = permissionCatalog();
    expect(catalog).toHaveLength(PERMISSIONS.filter((p) => p.assignable).length);
    expect(catalog).toContainEqual({
      namespace: 'role',
      action: 'edit',
      description: 'Edit custom roles',
      associated: [{ namespace: 'role', action: 'view', required: true }],
    });
    for (const entry of catalog) {
      expect(isAssignable(entry.namespace, entry.action)).toBe(true);
      for (const a of entry.associated ?? []) expect([entry.action, isAssignable(a.namespace, a.action)]).toEqual([entry.action, true]);
    }
    expect(isAssignable('org', 'delete')).toBe(false);
    expect(isAssignable('site_admin', 'view_contracts')).toBe(false);
    expect(isAssignable('team', 'join')).toBe(false);
  });

  it('lists the permissions checked on a type', () => {
    expect(permissionsOn('role').map((p) => p.name)).toEqual(['view:role', 'edit:role', 'delete:role', 'viewer:role']);
  });

  it('turns a role’s permissions into one grant tuple per organization relation', () => {
    expect(
      roleGrantTuples(7, 3, [
        { namespace: 'team-member', action: 'add' },
        { namespace: 'team', action: 'add' },
        { namespace: 'org', action: 'create_role' },
      ]),
    ).toEqual([
      { user: 'role:7#assignee', relation: 'add_team_member', object: 'organization:3' },
      { user: 'role:7#assignee', relation: 'create_role', object: 'organization:3' },
    ]);
    expect(() => roleGrantTuples(7, 3, [{ namespace: 'org', action: 'delete' }])).toThrow(InputError);
  });
});

// The same drift check with the engine: a role granting one permission lets its team check it and no more.
describe('permissions evaluated by the engine', () => {
  let database: Awaited<ReturnType<typeof openEngineDatabase>>;
  let engine: EmbeddedEngine;
  const objectOf: Record<string, string> = {
    site: SITE_OBJECT,
    organization: 'organization:1',
    team: 'team:1',
    role: 'role:1',
    contract: 'contract:1',
    cluster: 'cluster:1',
  };
  const check = (user: string, p: Permission) => engine.check({ user, relation: p.relation, object: objectOf[p.objectType] });

  beforeAll(async () => {
    database = await openEngineDatabase();
    ({ engine } = await database.engine());
    const t = (user: string, relation: string, object: string) => ({ user, relation, object });
    await engine.write(
      [
        t('user:root', 'admin', SITE_OBJECT),
        t(SITE_OBJECT, 'site', 'organization:1'),
        t('user:owner', 'owner', 'organization:1'),
        t('user:tom', 'member', 'organization:1'),
        t('user:plain', 'member', 'organization:1'),
        t('organization:1', 'organization', 'team:1'),
        t('user:tom', 'member', 'team:1'),
        t('organization:1', 'organization', 'role:1'),
        t('team:1#member', 'assignee', 'role:1'),
        t('organization:1', 'owner', 'contract:1'),
        t('organization:1', 'owner', 'cluster:1'),
      ],
      [],
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  const assignable = PERMISSIONS.filter((p) => p.assignable);
  it.each(assignable.map((p) => [p.name, p] as const))('a role granting %s gives it to its team', async (_name, p) => {
    const grant = roleGrantTuples(1, 1, [p]);
    const member = await check('user:plain', p);
    await engine.write(grant, []);
    try {
      expect(await check('user:tom', p)).toBe(true);
      expect(await check('user:outsider', p)).toBe(false);
    } finally {
      await engine.write([], grant);
    }
    // Without the grant, the team member is back to what any member has.
    expect(await check('user:tom', p)).toBe(member);
  });

  const selfActions = new Set(['join:team', 'leave:team']);
  // Membership is held by members only: a site admin is not a member of every organization.
  const membersOnly = new Set(['member:org']);
  it.each(PERMISSIONS.filter((p) => !selfActions.has(p.name) && !membersOnly.has(p.name)).map((p) => [p.name, p] as const))(
    'the site admin holds %s',
    async (_name, p) => {
      expect(await check('user:root', p)).toBe(true);
    },
  );

  it.each(PERMISSIONS.filter((p) => p.objectType !== 'site' && !selfActions.has(p.name)).map((p) => [p.name, p] as const))(
    'the organization owner holds %s',
    async (_name, p) => {
      expect(await check('user:owner', p)).toBe(true);
    },
  );

  it('nobody but the site admin holds a site permission', async () => {
    for (const p of permissionsOn('site')) {
      expect([p.name, await check('user:owner', p)]).toEqual([p.name, false]);
    }
  });
});
