import { randomUUID } from 'node:crypto';
import { ConflictError, InputError, NotFoundError, UnavailableError } from '@platform/errors';
import type { clientOrgsV1, clustersV1, orgTokensV1 } from '@platform/proto';
import { createLogger, type CallContext } from '@platform/service-kit';
import { startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { clustersApp } from '../src/app';
import { ClientOrgs } from '../src/client-orgs/client-orgs';
import { ClientOrgProvisioning, PROVISION_CLIENT_ORG_EFFECT } from '../src/client-orgs/provisioning';
import { DESIRED_STATE_EFFECT } from '../src/desired-state/desired-state';
import { Clusters } from '../src/inventory/clusters';
import { ENROLL_HUB_EFFECT, HubEnrolment } from '../src/inventory/enrolment';
import { Relationships, TUPLES_EFFECT } from '../src/inventory/tuples';
import { startAuthzStub, type AuthzStub } from './authz-stub';
import { hubRequest } from './hub-request';

// Client-org creation and hub enrolment against real Postgres, with a stand-in orgs-teams kept in memory: what a
// request makes is all there or all gone, and an operation found half done (as a crash leaves it) is finished or
// taken back by resuming it, as the outbox relay does after a restart.

interface StubUser {
  id: number;
  login: string;
  email: string;
  mustChangePassword: boolean;
  lastLoginUnix: number;
  createdUnix: number;
}

/** orgs-teams as the operations see it: users, organizations with their members, bus accounts; failures on demand. */
function orgsTeamsStub() {
  let next = 100;
  const users = new Map<string, StubUser>();
  const orgs = new Map<string, { id: number; username: string; fullName: string; members: Set<string> }>();
  const accounts = new Map<number, orgTokensV1.BusAccount & { orgId: number }>();
  const failing: Record<string, Error | undefined> = {};
  const fail = (rpc: string) => {
    if (failing[rpc]) throw failing[rpc];
  };
  const userOf = (login: string) => {
    const u = users.get(login);
    if (!u) throw new NotFoundError(`user ${login} does not exist`);
    return u;
  };
  const identity = {
    getUser: async (req: { login: string }) => userOf(req.login),
    createUser: async (req: { username: string; email: string }) => {
      fail('createUser');
      if (users.has(req.username)) throw new ConflictError(`user ${req.username} already exists`);
      const u = { id: next++, login: req.username, email: req.email, mustChangePassword: true, lastLoginUnix: 0, createdUnix: now() };
      users.set(u.login, u);
      return u;
    },
    deleteUnusedUser: async (req: { id: number }) => {
      const u = [...users.values()].find((x) => x.id === req.id);
      if (!u) throw new NotFoundError('no such user');
      users.delete(u.login);
      return {};
    },
  };
  const organizations = {
    getOrg: async (req: { name: string }) => {
      const o = orgs.get(req.name);
      if (!o) throw new NotFoundError(`organization ${req.name} does not exist`);
      return { id: o.id, username: o.username, fullName: o.fullName };
    },
    createOrg: async (req: { creatorId: number; username: string; fullName: string }) => {
      fail('createOrg');
      if (orgs.has(req.username) || users.has(req.username)) throw new ConflictError(`the name ${req.username} is already taken`);
      const creator = [...users.values()].find((u) => u.id === req.creatorId)!;
      const o = { id: next++, username: req.username, fullName: req.fullName, members: new Set([creator.login]) };
      orgs.set(o.username, o);
      return { id: o.id, username: o.username, fullName: o.fullName };
    },
    deleteOrg: async (req: { orgId: number }) => {
      const o = [...orgs.values()].find((x) => x.id === req.orgId);
      if (!o) throw new NotFoundError('no such organization');
      orgs.delete(o.username);
      return {};
    },
    getMembership: async (req: { orgId: number; username: string }) => ({
      member: [...orgs.values()].some((o) => o.id === req.orgId && o.members.has(req.username)),
      viewerSeesPrivate: true,
      public: false,
    }),
  };
  const orgTokens = {
    createBusAccount: async (req: { orgId: number; clusterId: string }) => {
      fail('createBusAccount');
      const id = next++;
      const account = { id, uid: 1, accountType: 'user', busPubKey: `U${id}`, clusterId: req.clusterId, productName: '', revoked: false };
      accounts.set(id, { ...account, orgId: req.orgId });
      return { account, seed: `SU-seed-${id}` };
    },
    listBusAccounts: async (req: { orgId: number }) => ({ accounts: [...accounts.values()].filter((a) => a.orgId === req.orgId) }),
    revokeBusAccount: async (req: { id: number }) => {
      fail('revokeBusAccount');
      const a = accounts.get(req.id);
      if (!a) throw new InputError(`bus user ${req.id} not found`);
      a.revoked = true;
      return {};
    },
  };
  return { users, orgs, accounts, failing, identity, organizations, orgTokens };
}

const now = () => Math.floor(Date.now() / 1000);

describe('operations across orgs-teams and clusters: all or nothing, also after a crash', () => {
  let authz: AuthzStub;
  let app: AppUnderTest;
  let relationships: Relationships;
  let stub: ReturnType<typeof orgsTeamsStub>;
  let provisioning: ClientOrgProvisioning;
  let enrolment: HubEnrolment;
  let hub: clustersV1.Cluster;
  const db = () => app.running.ctx.db!;
  const ctx = () => ({ requestId: randomUUID(), log: createLogger('test', 'silent'), signal: new AbortController().signal }) as CallContext;
  const OWNER = { id: 51, username: 'owner', fullName: '', members: new Set<string>() };

  const request = (name: string, extra: Partial<clientOrgsV1.ProvisionClientOrgRequest> = {}): clientOrgsV1.ProvisionClientOrgRequest => ({
    name,
    fullName: `${name} Inc.`,
    description: '',
    website: '',
    orgType: '',
    visibility: '',
    hubUid: hub.uid,
    hubOwnerName: 'owner',
    adminLogin: `${name}-admin`,
    adminEmail: `${name}-admin@example.com`,
    importSets: [],
    roleRefs: ['hub/view'],
    settingsJson: '{}',
    gatewayConfigRef: '',
    usableAsShared: false,
    requesterId: 1,
    ...extra,
  });
  /** A client-org creation as a crash left it: recorded, with what its steps had made so far. */
  const interrupted = async (
    name: string,
    fields: Record<string, unknown>,
    extra: Partial<clientOrgsV1.ProvisionClientOrgRequest> = {},
  ) => {
    const [row] = await db()
      .table('client_org_provisions')
      .insert({
        name,
        state: 'provisioning',
        request: JSON.stringify({ ...request(name, extra), managerEndpoint: 'https://mcm.example.com' }),
        admin_login: `${name}-admin`,
        admin_existed: false,
        requester_id: 1,
        ...fields,
      })
      .returning('id');
    return Number(row.id);
  };
  const clientRecord = (name: string) => db().table('client_orgs').where({ name }).first();
  const pending = async (table: string) => Number((await db().table(table).count({ n: '*' }))[0].n);

  beforeAll(async () => {
    authz = await startAuthzStub();
    app = await startAppForTest(clustersApp, { AUTHZ_GRPC_ADDR: authz.address, CLIENT_ORG_CLEANUP_INTERVAL_MS: '600000' });
    relationships = new Relationships(authz.address);
    stub = orgsTeamsStub();
    stub.orgs.set('owner', OWNER);
    provisioning = new ClientOrgProvisioning(db(), stub.identity as never, stub.organizations as never);
    enrolment = new HubEnrolment(db(), stub.orgTokens as never);
    // An outbox of the test's own with the app's effects: tuples to the stand-in authz; desired states nowhere.
    const outbox = app.running.ctx.outbox({
      [TUPLES_EFFECT]: relationships.effect(),
      [DESIRED_STATE_EFFECT]: { apply: async () => undefined },
      [PROVISION_CLIENT_ORG_EFFECT]: provisioning.effect(),
      [ENROLL_HUB_EFFECT]: enrolment.effect(),
    });
    const clusters = new Clusters(db(), outbox);
    provisioning.use(outbox, new ClientOrgs(db(), outbox, stub.organizations as never));
    enrolment.use(outbox, clusters);
    hub = await clusters.createHub(hubRequest(51, 'hub', { managerEndpoint: 'https://mcm.example.com' }), ctx());
  });
  afterAll(async () => {
    relationships?.close();
    await app?.stop();
    await authz?.server.shutdown(100);
  });
  afterEach(() => {
    for (const k of Object.keys(stub.failing)) delete stub.failing[k];
  });

  describe('client-org creation', () => {
    it('makes the admin user, the organization and the client record, and answers the organization', async () => {
      const made = await provisioning.provision(request('alpha'), ctx());
      expect(made.organization).toMatchObject({ username: 'alpha', fullName: 'alpha Inc.' });
      expect(made.clientOrg).toMatchObject({ name: 'alpha', status: 'Active', hubUid: hub.uid });
      expect(stub.orgs.get('alpha')!.members).toEqual(new Set(['alpha-admin']));
      expect(await clientRecord('alpha')).toMatchObject({ admin_login: 'alpha-admin', admin_user_id: stub.users.get('alpha-admin')!.id });
      expect(await pending('client_org_provisions')).toBe(0);
    });

    it('refuses a taken name (409) and a hub that is not the owner’s (400) before anything is made', async () => {
      await expect(provisioning.provision(request('alpha'), ctx())).rejects.toThrow('an organization named alpha already exists');
      await expect(provisioning.provision(request('alpha-admin'), ctx())).rejects.toThrow('a user named alpha-admin already exists');
      await expect(provisioning.provision(request('beta', { hubOwnerName: 'nobody' }), ctx())).rejects.toThrow(
        'hubClusterOwnerName nobody is no organization or user',
      );
      await expect(provisioning.provision(request('beta', { gatewayConfigRef: 'nobody' }), ctx())).rejects.toBeInstanceOf(InputError);
      expect(stub.users.has('beta-admin')).toBe(false);
      expect(await pending('client_org_provisions')).toBe(0);
    });

    it('takes back the admin user it made when a later step fails, and never a user that existed', async () => {
      stub.failing.createOrg = new UnavailableError('orgs-teams is down');
      await expect(provisioning.provision(request('gamma'), ctx())).rejects.toThrow('orgs-teams is down');
      expect(stub.users.has('gamma-admin')).toBe(false);
      // An existing user made the admin of the client org is used, never deleted.
      delete stub.failing.createOrg;
      await provisioning.provision(request('delta'), ctx());
      stub.failing.createOrg = new UnavailableError('orgs-teams is down');
      await expect(provisioning.provision(request('epsilon', { adminLogin: 'delta-admin' }), ctx())).rejects.toThrow();
      expect(stub.users.has('delta-admin')).toBe(true);
      expect(stub.orgs.has('epsilon')).toBe(false);
      expect(await pending('client_org_provisions')).toBe(0);
    });

    it('after a crash between the organization and its record, resuming finds what was made and finishes', async () => {
      // The admin user and the organization were made, but the crash came before the organization's id was recorded.
      const admin = await stub.identity.createUser({ username: 'zeta-admin', email: 'zeta-admin@example.com' });
      await stub.organizations.createOrg({ creatorId: admin.id, username: 'zeta', fullName: 'zeta Inc.' });
      const id = await interrupted('zeta', { admin_user_id: admin.id, admin_created: true });
      await provisioning.resume(id);
      expect(await clientRecord('zeta')).toMatchObject({ org_id: stub.orgs.get('zeta')!.id, status: 'Active' });
      expect(stub.users.has('zeta-admin')).toBe(true);
      expect(await pending('client_org_provisions')).toBe(0);
    });

    it('after a crash, an orgs-teams that is down is waited for; the creation then finishes', async () => {
      // Killed right after its intent was recorded: nothing made yet.
      const id = await interrupted('eta', {});
      stub.failing.createUser = new UnavailableError('orgs-teams is down');
      await expect(provisioning.resume(id)).rejects.toThrow('orgs-teams is down');
      expect(await db().table('client_org_provisions').where({ id }).first()).toMatchObject({ state: 'provisioning' });
      delete stub.failing.createUser;
      await provisioning.resume(id);
      expect(await clientRecord('eta')).toBeDefined();
      expect(stub.orgs.get('eta')!.members).toEqual(new Set(['eta-admin']));
    });

    it('after a crash, a step refused for good takes back the organization and the admin user the creation made', async () => {
      const admin = await stub.identity.createUser({ username: 'theta-admin', email: 'theta-admin@example.com' });
      const org = await stub.organizations.createOrg({ creatorId: admin.id, username: 'theta', fullName: '' });
      // The shared gateway config it names is gone by the time the relay resumes it: the record is refused.
      const id = await interrupted('theta', { admin_user_id: admin.id, admin_created: true, org_id: org.id }, { gatewayConfigRef: 'gone' });
      await provisioning.resume(id);
      expect(stub.orgs.has('theta')).toBe(false);
      expect(stub.users.has('theta-admin')).toBe(false);
      expect(await clientRecord('theta')).toBeUndefined();
      expect(await pending('client_org_provisions')).toBe(0);
    });
  });

  describe('hub enrolment', () => {
    const active = (uid: string) => [...stub.accounts.values()].filter((a) => a.clusterId === uid && !a.revoked);

    it('issues the bus account and records the hub, answering both', async () => {
      const uid = randomUUID();
      const enrolled = await enrolment.enroll(hubRequest(51, 'edge', { uid }), ctx());
      expect(enrolled.cluster).toMatchObject({ name: 'edge', uid, ownerId: 51 });
      expect(enrolled.bus).toMatchObject({ account: { clusterId: uid, revoked: false }, seed: expect.stringMatching(/^SU-seed-/) });
      expect(await pending('hub_enrolments')).toBe(0);
      // Refused as CreateHub would be (409) before an account is issued.
      await expect(enrolment.enroll(hubRequest(51, 'edge'), ctx())).rejects.toThrow('a cluster named "edge" already exists');
      expect([...stub.accounts.values()].filter((a) => a.orgId === 51)).toHaveLength(1);
    });

    it('revokes the account it issued when the hub is refused after all', async () => {
      const uid = randomUUID();
      // The uid is taken between the check and the record.
      stub.failing.createBusAccount = undefined;
      const create = stub.orgTokens.createBusAccount;
      stub.orgTokens.createBusAccount = async (req) => {
        await db().table('clusters').insert({ uid, owner_type: 'organization', owner_id: 52, name: 'theirs' });
        return create(req);
      };
      try {
        await expect(enrolment.enroll(hubRequest(51, 'late', { uid }), ctx())).rejects.toBeInstanceOf(ConflictError);
      } finally {
        stub.orgTokens.createBusAccount = create;
      }
      expect(active(uid)).toEqual([]);
      expect([...stub.accounts.values()].filter((a) => a.clusterId === uid)).toHaveLength(1);
      expect(await pending('hub_enrolments')).toBe(0);
    });

    it('after a crash once the account was issued, resuming revokes it (its seed was never answered) and records no hub', async () => {
      const uid = randomUUID();
      const request = hubRequest(51, 'crashed', { uid });
      // Killed before even the account's id was recorded.
      await stub.orgTokens.createBusAccount({ orgId: 51, clusterId: uid });
      const [row] = await db()
        .table('hub_enrolments')
        .insert({ owner_id: 51, name: 'crashed', uid, state: 'enrolling', request: JSON.stringify(request) })
        .returning('id');
      stub.failing.revokeBusAccount = new UnavailableError('orgs-teams is down');
      await expect(enrolment.resume(Number(row.id))).rejects.toThrow('orgs-teams is down');
      expect(active(uid)).toHaveLength(1);
      delete stub.failing.revokeBusAccount;
      await enrolment.resume(Number(row.id));
      expect(active(uid)).toEqual([]);
      expect(await db().table('clusters').where({ uid }).first()).toBeUndefined();
      expect(await pending('hub_enrolments')).toBe(0);
      // The name and the uid are free again.
      expect((await enrolment.enroll(request, ctx())).cluster).toMatchObject({ name: 'crashed', uid });
    });
  });
});
