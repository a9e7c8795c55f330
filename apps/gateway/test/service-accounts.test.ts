import { ConflictError, InputError, NotFoundError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1, serviceAccountsV1 } from '@platform/proto';
import { eventually } from '@platform/testing';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway, callApi } from './test-gateway';

// Service accounts at the edge (docs/service-accounts.md), against a stand-in orgs-teams: an organization's rows are
// for its owners and site admins (a member 403, a stranger to the private organization 404, no token 401), the
// site-wide rows for site admins only; bodies are strict (a field the row does not take is 422); only site admins
// bind Kubernetes ServiceAccounts; the account and its tokens in Grafana's shape, the secret shown once; each change
// in the audit trail. orgs-teams' own rules (names taken, roles of another organization, an account only under its
// organization, tokens, deactivation): apps/orgs-teams/test/service-accounts.int.test.ts. A token acting as its
// account across the platform: deploy/local/test/org-lists.int.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  owner: orgsTeamsV1.User.fromPartial({ id: 5, login: 'owner', active: true }),
  dev: orgsTeamsV1.User.fromPartial({ id: 6, login: 'dev', active: true }),
  rival: orgsTeamsV1.User.fromPartial({ id: 7, login: 'rival', active: true }),
};
/** acme is private: owner owns it, dev is a plain member. rival owns the public rival-org. */
const ORGS: Record<string, { id: number; visibility: string; owners: number[]; members: number[] }> = {
  acme: { id: 10, visibility: 'private', owners: [5], members: [5, 6] },
  'rival-org': { id: 11, visibility: 'public', owners: [7], members: [7] },
};
const orgById = (id: number) => Object.values(ORGS).find((o) => o.id === id);
const CREATED = 1_790_000_000;
const SECRET = 'c'.repeat(40);

describe('service accounts at the edge', () => {
  let base: string;
  let backends: FakeBackends;
  let close: () => void;
  /** The accounts orgs-teams keeps, by id. */
  const accounts = new Map<number, serviceAccountsV1.ServiceAccount>();
  const audited: orgsTeamsV1.AuditEvent[] = [];
  let nextId = 100;

  /** The account, when it is one of the organization's (id 0: the site-wide ones); as orgs-teams answers, 404 otherwise. */
  const accountOf = (orgId: number, id: number) => {
    const account = accounts.get(id);
    if (!account || account.orgId !== orgId) throw new NotFoundError(`service account ${id} does not exist`);
    return account;
  };

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
        },
        organizations: {
          getOrg: async ({ name, viewerId }) => {
            const org = ORGS[name];
            if (!org || !(org.visibility === 'public' || org.members.includes(viewerId) || viewerId === USERS.root.id))
              throw new NotFoundError(`organization ${name} does not exist`);
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: org.id, username: name, visibility: org.visibility });
          },
        },
        serviceAccounts: {
          listServiceAccounts: async ({ orgId }) => ({ serviceAccounts: [...accounts.values()].filter((a) => a.orgId === orgId) }),
          createServiceAccount: async (req) => {
            if ([...accounts.values()].some((a) => a.name.toLowerCase() === req.name.toLowerCase()))
              throw new ConflictError(`the name ${req.name} is taken`);
            if (req.roleIds.includes(999)) throw new InputError('roles 999 are not custom roles of this organization');
            const { creatorId: _creator, ...given } = req;
            const account = serviceAccountsV1.ServiceAccount.fromPartial({
              ...given,
              id: nextId++,
              active: req.active ?? true,
              createdUnix: CREATED,
              createdById: req.creatorId,
              createdByLogin: Object.values(USERS).find((u) => u.id === req.creatorId)?.login,
            });
            accounts.set(account.id, account);
            return account;
          },
          getServiceAccount: async ({ orgId, id }) => accountOf(orgId, id),
          editServiceAccount: async ({ orgId, id, ...edit }) => {
            const account = accountOf(orgId, id);
            if (edit.kubernetesSubjects) account.kubernetesSubjects = edit.kubernetesSubjects.subjects;
            if (edit.roleIds) account.roleIds = edit.roleIds.ids;
            if (edit.active !== undefined) account.active = edit.active;
            if (edit.siteAdmin !== undefined) account.siteAdmin = edit.siteAdmin;
            return account;
          },
          deleteServiceAccount: async ({ orgId, id }) => {
            accountOf(orgId, id);
            accounts.delete(id);
            return {};
          },
          createServiceAccountToken: async ({ orgId, serviceAccountId, name }) => {
            accountOf(orgId, serviceAccountId);
            if (name === 'taken') throw new ConflictError(`a token named ${name} exists`);
            return { id: 3, name, sha1: SECRET, tokenLastEight: SECRET.slice(-8), createdUnix: CREATED };
          },
          listServiceAccountTokens: async ({ orgId, id }) => {
            accountOf(orgId, id);
            return {
              tokens: [
                orgsTeamsV1.TokenInfo.fromPartial({ id: 3, name: 'pipeline', tokenLastEight: SECRET.slice(-8), createdUnix: CREATED }),
              ],
            };
          },
          deleteServiceAccountToken: async ({ orgId, serviceAccountId }) => {
            accountOf(orgId, serviceAccountId);
            return {};
          },
        },
        audit: {
          recordAuditEvent: async (event) => {
            audited.push(event);
            return {};
          },
          recordAuditEvents: async ({ events }) => {
            audited.push(...events);
            return {};
          },
        },
      },
      authz: {
        authz: {
          // root holds everything; an organization's owners hold manage_owners on it; members hold nothing more here.
          checkPermission: async ({ userId, objectId }) => ({
            allowed: userId === USERS.root.id || !!orgById(objectId)?.owners.includes(userId),
            dependsOn: [],
          }),
        },
        roles: { checkGrant: async () => ({ missing: [], dependsOn: [] }) },
      },
    });
    ({ base, close } = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'Hosted', PLATFORM_ADMIN_ORG: 'none' }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  const call = (who: string | undefined, method: string, path: string, body?: unknown) => callApi(base, who, method, path, body);
  const status = async (...args: Parameters<typeof call>) => (await call(...args)).status;
  let account: { id: number };

  it("lets an organization's owner create one holding custom roles, and mint a token shown once, listed without it", async () => {
    const created = await call('owner', 'POST', '/orgs/acme/service-accounts', { name: 'acme-ci', description: 'CI pipeline', roles: [4] });
    expect(created).toEqual({
      status: 201,
      body: {
        id: expect.any(Number),
        name: 'acme-ci',
        description: 'CI pipeline',
        org: 'acme',
        roles: [4],
        site_admin: false,
        kubernetes_subjects: [],
        active: true,
        created_at: new Date(CREATED * 1000).toISOString().replace('.000Z', 'Z'),
        created_by: { id: USERS.owner.id, login: 'owner' },
      },
    });
    account = created.body;
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'createServiceAccount').at(-1)).toMatchObject({
      orgId: ORGS.acme.id,
      roleIds: [4],
      siteAdmin: false,
      creatorId: USERS.owner.id,
    });
    expect((await call('owner', 'GET', '/orgs/acme/service-accounts')).body).toEqual([created.body]);
    expect((await call('owner', 'GET', `/orgs/acme/service-accounts/${account.id}`)).body).toEqual(created.body);

    const minted = await call('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, { name: 'pipeline' });
    expect(minted).toEqual({
      status: 201,
      body: { id: 3, name: 'pipeline', sha1: SECRET, token_last_eight: SECRET.slice(-8), created_at: expect.stringMatching(/Z$/) },
    });
    expect((await call('owner', 'GET', `/orgs/acme/service-accounts/${account.id}/tokens`)).body).toEqual([
      {
        id: 3,
        name: 'pipeline',
        token_last_eight: SECRET.slice(-8),
        created_at: minted.body.created_at,
        last_used_at: '0001-01-01T00:00:00Z',
      },
    ]);
  });

  it('is for owners and site admins: a member 403, a stranger to the private organization 404, no token 401', async () => {
    backends.orgsTeams.reset();
    expect(await call('dev', 'GET', '/orgs/acme/service-accounts')).toMatchObject({
      status: 403,
      body: { message: 'org ownership required' },
    });
    expect(await status('dev', 'POST', '/orgs/acme/service-accounts', { name: 'sneaky' })).toBe(403);
    expect(await status('dev', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(403);
    expect(await status('dev', 'DELETE', `/orgs/acme/service-accounts/${account.id}/tokens/3`)).toBe(403);
    expect(await status('rival', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(404);
    expect(await status(undefined, 'GET', '/orgs/acme/service-accounts')).toBe(401);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'createServiceAccount')).toEqual([]);
    // Under its own organization, an owner asks orgs-teams about that organization's accounts only.
    expect(await status('rival', 'GET', `/orgs/rival-org/service-accounts/${account.id}`)).toBe(404);
    expect(await status('rival', 'DELETE', `/orgs/rival-org/service-accounts/${account.id}`)).toBe(404);
    expect(await status('rival', 'POST', `/orgs/rival-org/service-accounts/${account.id}/tokens`, { name: 'steal' })).toBe(404);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'getServiceAccount')).toEqual([{ orgId: ORGS['rival-org'].id, id: account.id }]);
    // Site admins hold manage_owners everywhere; the site-wide rows do not show an organization's account.
    expect(await status('root', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(200);
    expect(await status('root', 'GET', `/admin/service-accounts/${account.id}`)).toBe(404);
  });

  it('refuses bad bodies with 422 before orgs-teams is asked, and passes on its 409 and 400', async () => {
    backends.orgsTeams.reset();
    for (const body of [{}, { name: 'x', site_admin: true }, { name: 'x', roles: ['1'] }, { name: 'x', extra: 1 }])
      expect([body, await status('owner', 'POST', '/orgs/acme/service-accounts', body)]).toEqual([body, 422]);
    expect(await status('root', 'POST', '/orgs/acme/service-accounts', { name: 'x', kubernetes_subjects: [''] })).toBe(422);
    expect(await status('root', 'POST', '/admin/service-accounts', { name: 'x', roles: [4] })).toBe(422);
    expect(await status('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { nickname: 'x' })).toBe(422);
    expect(await status('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, {})).toBe(422);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'createServiceAccount')).toEqual([]);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'editServiceAccount')).toEqual([]);

    expect(await status('owner', 'POST', '/orgs/acme/service-accounts', { name: 'ACME-CI' })).toBe(409);
    expect(await status('root', 'POST', '/admin/service-accounts', { name: 'acme-ci' })).toBe(409);
    expect(await status('owner', 'POST', `/orgs/acme/service-accounts/${account.id}/tokens`, { name: 'taken' })).toBe(409);
    expect(await call('owner', 'POST', '/orgs/acme/service-accounts', { name: 'x', roles: [999] })).toMatchObject({
      status: 400,
      body: { message: 'roles 999 are not custom roles of this organization' },
    });
  });

  it("binds Kubernetes ServiceAccounts for site admins only: an owner cannot claim another team's", async () => {
    backends.orgsTeams.reset();
    const claim = { kubernetes_subjects: ['team-b/worker'] };
    expect(await call('owner', 'POST', '/orgs/acme/service-accounts', { name: 'squatter', ...claim })).toMatchObject({
      status: 403,
      body: { message: 'Kubernetes subjects are bound by site admins' },
    });
    expect(await status('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, claim)).toBe(403);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'createServiceAccount')).toEqual([]);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'editServiceAccount')).toEqual([]);
    // Clearing takes nothing; a site admin binds one on the organization's account.
    expect(await status('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { kubernetes_subjects: [] })).toBe(200);
    expect(await call('root', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, claim)).toMatchObject({ status: 200, body: claim });
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'editServiceAccount').at(-1)).toMatchObject({
      orgId: ORGS.acme.id,
      id: account.id,
      kubernetesSubjects: { subjects: ['team-b/worker'] },
    });
  });

  it('edits, deactivates and deletes; a revoked token is passed on to orgs-teams', async () => {
    const paused = await call('owner', 'PATCH', `/orgs/acme/service-accounts/${account.id}`, { active: false, roles: [] });
    expect(paused).toMatchObject({ status: 200, body: { active: false, roles: [] } });
    expect(await status('owner', 'DELETE', `/orgs/acme/service-accounts/${account.id}/tokens/3`)).toBe(204);
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'deleteServiceAccountToken').at(-1)).toEqual({
      orgId: ORGS.acme.id,
      serviceAccountId: account.id,
      id: 3,
    });
    expect(await status('owner', 'DELETE', `/orgs/acme/service-accounts/${account.id}`)).toBe(204);
    expect(await status('owner', 'GET', `/orgs/acme/service-accounts/${account.id}`)).toBe(404);
    expect((await call('owner', 'GET', '/orgs/acme/service-accounts')).body).toEqual([]);
  });

  it('records every change in the audit trail with its actor', async () => {
    const actions = [
      'orgCreateServiceAccount',
      'orgCreateServiceAccountToken',
      'orgDeleteServiceAccountToken',
      'orgEditServiceAccount',
      'orgDeleteServiceAccount',
    ];
    await eventually(async () => actions.every((a) => audited.some((e) => e.action === a)), 5_000);
    expect(audited.find((e) => e.action === 'orgCreateServiceAccount')).toMatchObject({
      actorId: USERS.owner.id,
      actorLogin: 'owner',
      target: '/orgs/acme/service-accounts',
    });
  });

  it('lets a site admin keep site-wide ones, site admins among them; nobody else', async () => {
    expect(await call('owner', 'GET', '/admin/service-accounts')).toMatchObject({
      status: 403,
      body: { message: 'you do not have the admin:site permission' },
    });
    expect(await status('owner', 'POST', '/admin/service-accounts', { name: 'site-ops' })).toBe(403);
    const created = await call('root', 'POST', '/admin/service-accounts', {
      name: 'site-ops',
      site_admin: true,
      kubernetes_subjects: ['ops/auditor'],
    });
    expect(created).toMatchObject({
      status: 201,
      body: { name: 'site-ops', org: null, roles: [], site_admin: true, kubernetes_subjects: ['ops/auditor'], active: true },
    });
    expect(backends.orgsTeams.callsTo('serviceAccounts', 'createServiceAccount').at(-1)).toMatchObject({ orgId: 0, siteAdmin: true });
    expect((await call('root', 'GET', '/admin/service-accounts')).body.map((a: { name: string }) => a.name)).toEqual(['site-ops']);
    expect(await status('root', 'GET', `/orgs/acme/service-accounts/${created.body.id}`)).toBe(404);
    expect((await call('root', 'PATCH', `/admin/service-accounts/${created.body.id}`, { site_admin: false })).body.site_admin).toBe(false);
    expect(await status('root', 'DELETE', `/admin/service-accounts/${created.body.id}`)).toBe(204);
  });
});
