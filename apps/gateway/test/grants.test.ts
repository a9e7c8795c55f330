import type { Route } from '../src/route';
import { ROUTES } from '../src/sections';

// No one gives more than they hold (docs/authorization.md): every row that gives custom roles, or the permissions
// a role carries, declares so (`gives`), and the edge checks it through authz. These tests keep a new row from
// giving roles without the check, and pin what each row says it gives.

const key = (r: Route) => `${r.method.toUpperCase()} ${r.path}`;
const row = (k: string) => ROUTES.find((r) => key(r) === k)!;
/** Body fields through which a request gives roles or permissions. */
const GIVING_FIELDS = ['assignedRoleIDs', 'teamIDs', 'permissions', 'roles'];
/** Relations that let a caller put users into teams, and so give them the teams' roles. */
const ADDING = ['add:team-member', 'add:team', 'join:team'];

const team = { id: 7, name: 'vault', organization: { id: 3 } };
const role = { id: 5, permissions: [{ namespace: 'org', action: 'edit' }] };
const ctx = (over: object) => ({ org: { id: 3, name: 'acme' }, target: undefined, ...over }) as never;
const given = (k: string, body: unknown, target: unknown) => row(k).gives!.of({ params: {}, query: {}, body }, ctx({ target }));

describe('rows that give custom roles', () => {
  it('declare what they give: every row with a role field in its body or putting users into teams, and only those', () => {
    const fieldsOf = (r: Route) => Object.keys((r.body?.schema as { shape?: object } | undefined)?.shape ?? {});
    const giving = ROUTES.filter(
      (r) => fieldsOf(r).some((f) => GIVING_FIELDS.includes(f)) || r.requires?.some((q) => q.permission !== undefined && ADDING.includes(q.permission)),
    );
    expect(giving.filter((r) => !r.gives).map(key)).toEqual([]);
    expect(
      ROUTES.filter((r) => r.gives)
        .map(key)
        .sort(),
    ).toEqual(
      [
        'POST /authz/roles',
        'PUT /authz/roles/:id',
        'POST /orgs/:orgname/teams',
        'PATCH /teams/:teamid',
        'PUT /teams/:teamid/members/:username',
        'POST /orgs/:orgname/teams/:teamid/action/join',
        'POST /orgs/:orgname/teams/:teamid/action/add',
        'POST /orgs/:orgname/service-accounts',
        'PATCH /orgs/:orgname/service-accounts/:id',
      ].sort(),
    );
  });

  it("give the roles named in a service account's roles; none named gives nothing", () => {
    const acme = { id: 3, username: 'acme' };
    expect(given('POST /orgs/:orgname/service-accounts', { name: 'robot', roles: [1, 2] }, acme)).toMatchObject({ orgId: 3, roleIds: [1, 2] });
    expect(given('PATCH /orgs/:orgname/service-accounts/:id', { roles: [4] }, acme)).toMatchObject({ orgId: 3, roleIds: [4] });
    expect(given('PATCH /orgs/:orgname/service-accounts/:id', { roles: [] }, acme)).toBeUndefined();
    expect(given('PATCH /orgs/:orgname/service-accounts/:id', { active: false }, acme)).toBeUndefined();
  });

  it('give the roles named in assignedRoleIDs on team creation and edit; none named gives nothing', () => {
    expect(given('POST /orgs/:orgname/teams', { assignedRoleIDs: [1, 2] }, { id: 3 })).toMatchObject({ orgId: 3, roleIds: [1, 2] });
    expect(given('PATCH /teams/:teamid', { assignedRoleIDs: [4] }, team)).toMatchObject({ orgId: 3, roleIds: [4] });
    expect(given('PATCH /teams/:teamid', { assignedRoleIDs: [] }, team)).toBeUndefined();
    expect(given('PATCH /teams/:teamid', { name: 'vault' }, team)).toBeUndefined();
    expect(given('POST /orgs/:orgname/teams', { name: 'x', type: 'general' }, { id: 3 })).toBeUndefined();
  });

  it('give the roles of the team a user is put into', () => {
    for (const k of [
      'PUT /teams/:teamid/members/:username',
      'POST /orgs/:orgname/teams/:teamid/action/join',
      'POST /orgs/:orgname/teams/:teamid/action/add',
    ])
      expect(given(k, undefined, team)).toMatchObject({ orgId: 3, teamIds: [7], what: 'putting a user into team vault' });
  });

  it('give a role’s new permission set, or its current one when only new teams are sent', () => {
    const perms = [{ namespace: 'org', action: 'edit' }];
    expect(given('POST /authz/roles', { name: 'r', permissions: perms }, undefined)).toMatchObject({ orgId: 3, permissions: perms });
    expect(given('PUT /authz/roles/:id', { permissions: perms, teamIDs: [1] }, role)).toMatchObject({ orgId: 3, permissions: perms });
    expect(given('PUT /authz/roles/:id', { teamIDs: [1] }, role)).toMatchObject({ orgId: 3, roleIds: [5] });
    expect(given('PUT /authz/roles/:id', { teamIDs: [] }, role)).toBeUndefined();
    expect(given('PUT /authz/roles/:id', { name: 'renamed', description: 'd' }, role)).toBeUndefined();
  });
});
