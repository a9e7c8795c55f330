import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ACCOUNTS_CHANGED, type AccountsChanged } from '@platform/bus';
import { orgsTeamsOrgsV1, orgsTeamsV1, serviceAccountsV1 } from '@platform/proto';
import { createClient, startApp, type PromiseClient, type RunningService } from '@platform/service-kit';
import { startAppForTest } from '@platform/service-testing';
import { eventually } from '@platform/testing';
import { orgsTeamsApp } from '../src/app';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { serviceAccountJwt, startKubernetesStub, type KubernetesStub } from './kubernetes-stub';
import { orgRequest } from './orgs-teams-under-test';

// ServiceAccountsService and what service accounts are elsewhere in orgs-teams (docs/service-accounts.md), on a real
// Postgres server and on the embedded PGlite (one connection: no change may wait for another), against a stand-in
// authz keeping tuples as OpenFGA does and a stand-in Kubernetes API answering TokenReview over HTTPS.

interface Started {
  running: RunningService;
  address: string;
  stop(): Promise<void>;
}

const BACKENDS: [string, (env: Record<string, string>) => Promise<Started>][] = [
  ['Postgres', (env) => startAppForTest(orgsTeamsApp, env)],
  [
    'PGlite',
    async (env) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'orgs-teams-pglite-'));
      const running = await startApp(orgsTeamsApp, { GRPC_PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dataDir, ...env });
      return {
        running,
        address: `127.0.0.1:${running.grpcPort}`,
        async stop() {
          await running.stop();
          fs.rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  ],
];

describe.each(BACKENDS)('service accounts on %s', (_name, start) => {
  let authz: AuthzStub;
  let kubernetes: KubernetesStub;
  let app: Started;
  let accounts: PromiseClient<typeof serviceAccountsV1.ServiceAccountsServiceService>;
  let identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  let orgs: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  let stopListening: () => Promise<void>;
  const notices: number[][] = [];
  let root: number;
  let alice: number;
  let acme: orgsTeamsOrgsV1.Organization;
  let other: orgsTeamsOrgsV1.Organization;
  const ROLE = 501;
  const ROLE2 = 502;
  const OTHER_ROLE = 601;

  const has = (user: string, relation: string, object: string) => authz.tuples.has(`${user} ${relation} ${object}`);
  const tuplesOf = (id: number) => [...authz.tuples.keys()].filter((k) => k.startsWith(`user:${id} `)).sort();
  const newOrg = (username: string) => orgs.createOrg(orgRequest(alice, username, { visibility: 'private' }));
  const create = (over: Partial<serviceAccountsV1.CreateServiceAccountRequest>) =>
    accounts.createServiceAccount({
      orgId: acme.id,
      name: 'exporter',
      description: '',
      roleIds: [],
      siteAdmin: false,
      kubernetesSubjects: [],
      creatorId: alice,
      ...over,
    });
  const noticed = (id: number) => eventually(async () => notices.some((ids) => ids.includes(id)));
  /** Runs fn with tuple writes failing. */
  async function whileAuthzFails<T>(fn: () => Promise<T>): Promise<T> {
    authz.state.failWrites = true;
    try {
      return await fn();
    } finally {
      authz.state.failWrites = false;
    }
  }

  beforeAll(async () => {
    authz = await startAuthzStub();
    kubernetes = await startKubernetesStub();
    app = await start({
      AUTHZ_GRPC_ADDR: authz.address,
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      PLATFORM_ADMIN_PASSWORD: 'correct horse battery',
      PLATFORM_ADMIN_ORG: 'none',
      OUTBOX_RELAY_INTERVAL_MS: '200',
      KUBERNETES_TOKEN_AUDIENCE: 'platform',
      KUBERNETES_API_URL: kubernetes.url,
      KUBERNETES_API_TOKEN_FILE: kubernetes.files.token,
      KUBERNETES_API_CA_FILE: kubernetes.files.ca,
    });
    stopListening = await app.running.ctx.bus!.listen(ACCOUNTS_CHANGED, (_subject, payload) => {
      notices.push((payload as AccountsChanged).userIds);
    });
    const client = <D>(definition: D) => createClient(definition, app.address, { name: 'orgs-teams' });
    accounts = client(serviceAccountsV1.ServiceAccountsServiceService);
    identity = client(orgsTeamsV1.OrgsTeamsServiceService);
    orgs = client(orgsTeamsOrgsV1.OrganizationsServiceService);
    root = (await identity.getUser({ id: 0, login: 'root' })).id;
    alice = (
      await identity.createUser({
        username: 'alice',
        email: 'alice@example.com',
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      })
    ).id;
    acme = await newOrg('acme');
    other = await newOrg('other');
    authz.roles.set(ROLE, acme.id);
    authz.roles.set(ROLE2, acme.id);
    authz.roles.set(OTHER_ROLE, other.id);
  }, 60_000);

  afterAll(async () => {
    await stopListening?.();
    for (const c of [accounts, identity, orgs]) c?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
    await kubernetes?.close();
  });

  it("creates an organization's service account: a member of it holding its roles, who made it said", async () => {
    const sa = await create({ name: 'Exporter', description: 'metrics exporter', roleIds: [ROLE2, ROLE, ROLE] });
    expect(sa).toMatchObject({
      name: 'Exporter',
      description: 'metrics exporter',
      orgId: acme.id,
      roleIds: [ROLE, ROLE2],
      siteAdmin: false,
      kubernetesSubjects: [],
      active: true,
      createdById: alice,
      createdByLogin: 'alice',
    });
    expect(tuplesOf(sa.id)).toEqual(
      [
        `user:${sa.id} member organization:${acme.id}`,
        `user:${sa.id} assignee role:${ROLE}`,
        `user:${sa.id} assignee role:${ROLE2}`,
      ].sort(),
    );
    expect((await accounts.listServiceAccounts({ orgId: acme.id })).serviceAccounts.map((a) => a.name)).toEqual(['Exporter']);
    expect((await accounts.listServiceAccounts({ orgId: 0 })).serviceAccounts).toEqual([]);
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('refuses a taken name (a user, an organization, a service account, any case) with 409 and a bad one with 422', async () => {
    const sa = await create({ name: 'taken-sa' });
    for (const name of ['ALICE', 'acme', 'Taken-SA']) await expect(create({ name })).rejects.toMatchObject({ kind: 'conflict' });
    await expect(create({ orgId: 0, name: 'taken-sa' })).rejects.toMatchObject({ kind: 'conflict' });
    // Nor can a user or an organization take its name.
    await expect(newOrg('taken-sa')).rejects.toMatchObject({ kind: 'conflict' });
    await expect(
      identity.createUser({
        username: 'taken-sa',
        email: 't@example.com',
        password: 'password1',
        fullName: '',
        mustChangePassword: false,
        isAdmin: false,
      }),
    ).rejects.toMatchObject({ kind: 'conflict' });
    for (const name of ['', 'has space', '-dash', 'dot.'])
      await expect(create({ name })).rejects.toMatchObject({
        kind: 'validation',
        fieldViolations: [expect.objectContaining({ field: 'name' })],
      });
    // Longer than any login: refused by the field limits before anything is looked at.
    await expect(create({ name: 'x'.repeat(41) })).rejects.toMatchObject({ kind: 'input', message: 'name: at most 40 characters' });
    await expect(accounts.editServiceAccount({ orgId: acme.id, id: sa.id, name: 'alice' })).rejects.toMatchObject({ kind: 'conflict' });
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it("refuses another organization's roles, roles of a site-wide account and a site admin of an organization's (400)", async () => {
    await expect(create({ name: 'foreign', roleIds: [ROLE, OTHER_ROLE] })).rejects.toMatchObject({
      kind: 'input',
      message: `roles ${OTHER_ROLE} are not custom roles of this organization`,
    });
    await expect(create({ name: 'foreign', roleIds: [999] })).rejects.toMatchObject({ kind: 'input' });
    await expect(create({ name: 'foreign', orgId: 0, roleIds: [ROLE] })).rejects.toMatchObject({ kind: 'input' });
    await expect(create({ name: 'foreign', siteAdmin: true })).rejects.toMatchObject({ kind: 'input' });
    await expect(create({ name: 'foreign', orgId: 999_999 })).rejects.toMatchObject({ kind: 'not-found' });
    expect((await accounts.listServiceAccounts({ orgId: acme.id })).serviceAccounts).toEqual([]);
  });

  it('answers an account only under its own organization (404 under another, or as a site-wide one)', async () => {
    const sa = await create({ name: 'scoped' });
    await expect(accounts.getServiceAccount({ orgId: other.id, id: sa.id })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(accounts.getServiceAccount({ orgId: 0, id: sa.id })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(accounts.editServiceAccount({ orgId: other.id, id: sa.id, active: false })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(accounts.deleteServiceAccount({ orgId: other.id, id: sa.id })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(accounts.createServiceAccountToken({ orgId: other.id, serviceAccountId: sa.id, name: 't' })).rejects.toMatchObject({
      kind: 'not-found',
    });
    // A user's id is no service account either.
    await expect(accounts.getServiceAccount({ orgId: 0, id: alice })).rejects.toMatchObject({ kind: 'not-found' });
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('is no person: not a user to look up or list, no team member, no Basic sign-in, no tokens of its own making', async () => {
    const sa = await create({ name: 'robot' });
    await expect(identity.getUser({ id: 0, login: 'robot' })).rejects.toMatchObject({ kind: 'not-found' });
    await expect(identity.getUser({ id: sa.id, login: '' })).rejects.toMatchObject({ kind: 'not-found' });
    expect((await identity.getUsers({ ids: [sa.id, alice] })).users.map((u) => u.login)).toEqual(['alice']);
    expect((await identity.listUserAccounts({ afterId: 0, limit: 0 })).users.map((u) => u.login)).not.toContain('robot');
    // GetAccounts names every kind of account (the principals of a role among them).
    expect((await identity.getAccounts({ ids: [sa.id] })).users).toEqual([
      expect.objectContaining({ login: 'robot', type: 2, serviceAccount: true }),
    ]);
    const owners = (await orgs.listTeams({ orgId: acme.id })).teams[0];
    await expect(orgs.addTeamMember({ teamId: owners.id, userId: sa.id, username: '', conflictIfMember: false })).rejects.toMatchObject({
      kind: 'input',
      message: 'robot is a service account, not a user',
    });
    await expect(orgs.addTeamMember({ teamId: owners.id, userId: 0, username: 'robot', conflictIfMember: false })).rejects.toMatchObject({
      kind: 'input',
    });
    expect((await orgs.listMembers({ orgId: acme.id, viewerId: root, publicOnly: false })).members.map((m) => m.login)).toEqual(['alice']);
    await expect(identity.authenticateBasic({ username: 'robot', password: '' })).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(identity.createToken({ userId: sa.id, name: 'own', scope: '', scopeAccountId: 0, accessScopes: [] })).rejects.toMatchObject({
      kind: 'not-allowed',
    });
    await expect(
      identity.createToken({ userId: sa.id, name: 'proxy', scope: 'license-proxy', scopeAccountId: acme.id, accessScopes: [] }),
    ).rejects.toMatchObject({ kind: 'not-allowed' });
    // It sees its private organization as the members do.
    expect((await orgs.getOrg({ name: 'acme', viewerId: sa.id })).id).toBe(acme.id);
    await expect(orgs.getOrg({ name: 'other', viewerId: sa.id })).rejects.toMatchObject({ kind: 'not-found' });
    // Its own organizations (GET /user/orgs): the one it belongs to, on the first page only; asked about by another,
    // it is not a user.
    const own = (page: number) => orgs.listUserOrgs({ userId: sa.id, username: '', viewerId: sa.id, page: { page, limit: 1 } });
    expect(await own(1)).toMatchObject({ total: 1, orgs: [expect.objectContaining({ id: acme.id, username: 'acme' })] });
    expect(await own(2)).toMatchObject({ total: 1, orgs: [] });
    await expect(orgs.listUserOrgs({ userId: 0, username: 'robot', viewerId: alice, page: undefined })).rejects.toMatchObject({
      kind: 'input',
    });
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('mints tokens shown once that authenticate as the account, records their use, and refuses a deleted one at once', async () => {
    const sa = await create({ name: 'minter' });
    const token = await accounts.createServiceAccountToken({ orgId: acme.id, serviceAccountId: sa.id, name: 'ci' });
    expect(token).toMatchObject({ name: 'ci', sha1: expect.stringMatching(/^[0-9a-f]{40}$/), tokenLastEight: token.sha1.slice(-8) });
    expect(token.createdUnix).toBeGreaterThan(0);
    await expect(accounts.createServiceAccountToken({ orgId: acme.id, serviceAccountId: sa.id, name: 'ci' })).rejects.toMatchObject({
      kind: 'conflict',
    });
    const before = await accounts.listServiceAccountTokens({ orgId: acme.id, id: sa.id });
    expect(before.tokens).toEqual([expect.objectContaining({ id: token.id, name: 'ci', lastUsedUnix: 0 })]);
    const answer = await identity.authenticate({ token: token.sha1 });
    expect(answer.user).toMatchObject({ id: sa.id, login: 'minter', type: 2, serviceAccount: true, serviceAccountOrgId: acme.id });
    expect(answer.tokenId).toBe(token.id);
    const [used] = (await accounts.listServiceAccountTokens({ orgId: acme.id, id: sa.id })).tokens;
    expect(used.lastUsedUnix).toBeGreaterThan(0);
    // A personal-token route must not list or delete them.
    expect((await identity.listTokens({ userId: alice })).tokens).toEqual([]);

    await accounts.deleteServiceAccountToken({ orgId: acme.id, serviceAccountId: sa.id, id: token.id });
    await noticed(sa.id);
    await expect(identity.authenticate({ token: token.sha1 })).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(accounts.deleteServiceAccountToken({ orgId: acme.id, serviceAccountId: sa.id, id: token.id })).rejects.toMatchObject({
      kind: 'not-found',
    });
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('edits: a deactivated account authenticates nobody, roles given are replaced whole, each edit announced', async () => {
    const sa = await create({ name: 'editable', roleIds: [ROLE] });
    const { sha1 } = await accounts.createServiceAccountToken({ orgId: acme.id, serviceAccountId: sa.id, name: 'ci' });
    notices.length = 0;
    const edited = await accounts.editServiceAccount({ orgId: acme.id, id: sa.id, active: false, description: 'paused' });
    expect(edited).toMatchObject({ active: false, description: 'paused', roleIds: [ROLE] });
    await noticed(sa.id);
    await expect(identity.authenticate({ token: sha1 })).rejects.toMatchObject({ kind: 'unauthenticated', message: 'user is not active' });

    notices.length = 0;
    const moved = await accounts.editServiceAccount({
      orgId: acme.id,
      id: sa.id,
      active: true,
      roleIds: { ids: [ROLE2] },
      name: 'renamed',
    });
    expect(moved).toMatchObject({ name: 'renamed', active: true, roleIds: [ROLE2] });
    await noticed(sa.id);
    expect(has(`user:${sa.id}`, 'assignee', `role:${ROLE}`)).toBe(false);
    expect(has(`user:${sa.id}`, 'assignee', `role:${ROLE2}`)).toBe(true);
    expect((await identity.authenticate({ token: sha1 })).user?.login).toBe('renamed');
    // Roles not given stay; an empty list takes them all.
    expect(await accounts.editServiceAccount({ orgId: acme.id, id: sa.id, description: 'x' })).toMatchObject({ roleIds: [ROLE2] });
    expect(await accounts.editServiceAccount({ orgId: acme.id, id: sa.id, roleIds: { ids: [] } })).toMatchObject({ roleIds: [] });
    expect(tuplesOf(sa.id)).toEqual([`user:${sa.id} member organization:${acme.id}`]);
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('leaves rows as they were when authz cannot write the tuples (create and edit)', async () => {
    await whileAuthzFails(() => expect(create({ name: 'unwritten', roleIds: [ROLE] })).rejects.toMatchObject({ kind: 'unavailable' }));
    expect((await accounts.listServiceAccounts({ orgId: acme.id })).serviceAccounts).toEqual([]);
    // The name is free again.
    const sa = await create({ name: 'unwritten', roleIds: [ROLE], kubernetesSubjects: ['ns/a'] });
    await whileAuthzFails(() =>
      expect(
        accounts.editServiceAccount({
          orgId: acme.id,
          id: sa.id,
          roleIds: { ids: [ROLE2] },
          kubernetesSubjects: { subjects: ['ns/b'] },
          name: 'moved',
        }),
      ).rejects.toMatchObject({ kind: 'unavailable' }),
    );
    expect(await accounts.getServiceAccount({ orgId: acme.id, id: sa.id })).toMatchObject({
      name: 'unwritten',
      roleIds: [ROLE],
      kubernetesSubjects: ['ns/a'],
    });
    expect(tuplesOf(sa.id)).toEqual([`user:${sa.id} assignee role:${ROLE}`, `user:${sa.id} member organization:${acme.id}`].sort());
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('leaves out roles authz deleted since they were given', async () => {
    const GONE = 503;
    authz.roles.set(GONE, acme.id);
    const sa = await create({ name: 'outlived', roleIds: [ROLE, GONE] });
    authz.roles.delete(GONE);
    expect((await accounts.getServiceAccount({ orgId: acme.id, id: sa.id })).roleIds).toEqual([ROLE]);
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
  });

  it('makes a site-wide account, which may be a site admin and is listed on its own', async () => {
    const sa = await create({ orgId: 0, name: 'site-robot', siteAdmin: true });
    expect(sa).toMatchObject({ orgId: 0, siteAdmin: true, roleIds: [] });
    expect(tuplesOf(sa.id)).toEqual([`user:${sa.id} admin site:platform`]);
    expect((await accounts.listServiceAccounts({ orgId: 0 })).serviceAccounts.map((a) => a.name)).toEqual(['site-robot']);
    await expect(accounts.getServiceAccount({ orgId: acme.id, id: sa.id })).rejects.toMatchObject({ kind: 'not-found' });
    const { sha1 } = await accounts.createServiceAccountToken({ orgId: 0, serviceAccountId: sa.id, name: 'ops' });
    expect((await identity.authenticate({ token: sha1 })).user).toMatchObject({
      isAdmin: true,
      serviceAccount: true,
      serviceAccountOrgId: 0,
    });
    // A site admin sees every organization, private ones included; it belongs to none.
    expect((await orgs.getOrg({ name: 'other', viewerId: sa.id })).id).toBe(other.id);
    expect(await orgs.listUserOrgs({ userId: sa.id, username: '', viewerId: sa.id, page: undefined })).toMatchObject({ total: 0, orgs: [] });

    notices.length = 0;
    expect(await accounts.editServiceAccount({ orgId: 0, id: sa.id, siteAdmin: false })).toMatchObject({ siteAdmin: false });
    await noticed(sa.id);
    expect(tuplesOf(sa.id)).toEqual([]);
    expect((await identity.authenticate({ token: sha1 })).user?.isAdmin).toBe(false);
    await accounts.deleteServiceAccount({ orgId: 0, id: sa.id });
  });

  it('deletes an account with its tokens and tuples, and announces it', async () => {
    const sa = await create({ name: 'doomed', roleIds: [ROLE], kubernetesSubjects: ['ns/doomed'] });
    const { sha1 } = await accounts.createServiceAccountToken({ orgId: acme.id, serviceAccountId: sa.id, name: 'ci' });
    notices.length = 0;
    await accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id });
    await noticed(sa.id);
    expect(tuplesOf(sa.id)).toEqual([]);
    await expect(identity.authenticate({ token: sha1 })).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(accounts.getServiceAccount({ orgId: acme.id, id: sa.id })).rejects.toMatchObject({ kind: 'not-found' });
    // Its subject is free again.
    await accounts.deleteServiceAccount({ orgId: acme.id, id: (await create({ name: 'heir', kubernetesSubjects: ['ns/doomed'] })).id });
  });

  it('goes with its organization: tokens, tuples and all, announced', async () => {
    const doomed = await newOrg('doomed-org');
    authz.roles.set(777, doomed.id);
    const sa = await create({ orgId: doomed.id, name: 'org-robot', roleIds: [777] });
    const { sha1 } = await accounts.createServiceAccountToken({ orgId: doomed.id, serviceAccountId: sa.id, name: 'ci' });
    notices.length = 0;
    await orgs.deleteOrg({ orgId: doomed.id, requesterId: alice });
    await noticed(sa.id);
    expect(tuplesOf(sa.id)).toEqual([]);
    await expect(identity.authenticate({ token: sha1 })).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect((await identity.getAccounts({ ids: [sa.id] })).users).toEqual([]);
  });

  describe('Kubernetes ServiceAccount tokens', () => {
    let sa: serviceAccountsV1.ServiceAccount;
    beforeAll(async () => {
      sa = await create({ name: 'in-cluster', kubernetesSubjects: ['billing/exporter', 'billing/exporter', 'ops/cron.job'] });
    });
    afterAll(() => accounts.deleteServiceAccount({ orgId: acme.id, id: sa.id }));
    beforeEach(() => {
      kubernetes.asked.length = 0;
      kubernetes.state.failWith = 0;
    });

    it('keeps subjects once each, sorted, and each bound to one account (409)', async () => {
      expect(sa.kubernetesSubjects).toEqual(['billing/exporter', 'ops/cron.job']);
      await expect(create({ name: 'twin', kubernetesSubjects: ['ops/cron.job'] })).rejects.toMatchObject({
        kind: 'conflict',
        message: 'ops/cron.job already stand for another service account',
      });
      for (const subject of ['no-slash', 'Upper/case', 'ns/', '/name', 'a/b/c'])
        await expect(create({ name: 'twin', kubernetesSubjects: [subject] })).rejects.toMatchObject({ kind: 'validation' });
    });

    it('authenticates a token the API server vouches for, for our audience, as the bound account; asks once while it lasts', async () => {
      const jwt = serviceAccountJwt('system:serviceaccount:billing:exporter');
      kubernetes.reviews.set(jwt, { authenticated: true, username: 'system:serviceaccount:billing:exporter' });
      const { user, tokenId } = await identity.authenticate({ token: jwt });
      expect(user).toMatchObject({ id: sa.id, serviceAccount: true, serviceAccountOrgId: acme.id });
      expect(tokenId).toBe(0);
      expect(kubernetes.asked).toEqual([{ token: jwt, audiences: ['platform'], authorization: 'Bearer orgs-teams-pod-token' }]);
      await identity.authenticate({ token: jwt });
      expect(kubernetes.asked).toHaveLength(1);
    });

    it('asks again once the token has expired, and refuses what the API server no longer vouches for', async () => {
      const jwt = serviceAccountJwt('system:serviceaccount:ops:cron.job', 1);
      kubernetes.reviews.set(jwt, { authenticated: true, username: 'system:serviceaccount:ops:cron.job' });
      expect((await identity.authenticate({ token: jwt })).user?.id).toBe(sa.id);
      await new Promise((r) => setTimeout(r, 1100));
      kubernetes.reviews.set(jwt, { authenticated: false });
      await expect(identity.authenticate({ token: jwt })).rejects.toMatchObject({ kind: 'unauthenticated', message: 'invalid token' });
      expect(kubernetes.asked).toHaveLength(2);
    });

    it('refuses other audiences, ServiceAccounts bound to no account, other users, and an inactive account', async () => {
      const cases: [string, { username: string; audiences?: string[] }][] = [
        ['other audience', { username: 'system:serviceaccount:billing:exporter', audiences: ['vault'] }],
        ['no audience said', { username: 'system:serviceaccount:billing:exporter', audiences: [] }],
        ['unbound', { username: 'system:serviceaccount:billing:stranger' }],
        ['a person', { username: 'alice@example.com' }],
      ];
      for (const [name, review] of cases) {
        const jwt = serviceAccountJwt(name);
        kubernetes.reviews.set(jwt, { authenticated: true, ...review });
        await expect(identity.authenticate({ token: jwt })).rejects.toMatchObject({ kind: 'unauthenticated' });
      }
      const jwt = serviceAccountJwt('inactive');
      kubernetes.reviews.set(jwt, { authenticated: true, username: 'system:serviceaccount:billing:exporter' });
      await accounts.editServiceAccount({ orgId: acme.id, id: sa.id, active: false });
      try {
        await expect(identity.authenticate({ token: jwt })).rejects.toMatchObject({
          kind: 'unauthenticated',
          message: 'user is not active',
        });
      } finally {
        await accounts.editServiceAccount({ orgId: acme.id, id: sa.id, active: true });
      }
      // Unbinding takes effect at once, cached review or not.
      await accounts.editServiceAccount({ orgId: acme.id, id: sa.id, kubernetesSubjects: { subjects: ['ops/cron.job'] } });
      await expect(identity.authenticate({ token: jwt })).rejects.toMatchObject({ kind: 'unauthenticated' });
      await accounts.editServiceAccount({
        orgId: acme.id,
        id: sa.id,
        kubernetesSubjects: { subjects: ['billing/exporter', 'ops/cron.job'] },
      });
    });

    it('answers unavailable when the API server fails, and never takes a platform token for a JWT', async () => {
      kubernetes.state.failWith = 403;
      await expect(identity.authenticate({ token: serviceAccountJwt('failing') })).rejects.toMatchObject({ kind: 'unavailable' });
      kubernetes.state.failWith = 0;
      await expect(identity.authenticate({ token: '0'.repeat(40) })).rejects.toMatchObject({ kind: 'unauthenticated' });
      expect(kubernetes.asked).toHaveLength(1);
    });
  });
});
