import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status,
  type Client,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { ACCOUNTS_CHANGED, InProcessBus } from '@platform/bus';
import * as proto from '@platform/proto';
import {
  authzV1,
  hasPolicies,
  methodPolicy,
  orgsTeamsOrgsV1,
  orgsTeamsV1,
  type AccessQuestion,
  type CallingAccount,
} from '@platform/proto';
import { appCredential } from './app-credential';
import { CredentialCache, type CallerAccess } from './caller';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server';
import { bindService } from './service-binding';
import { createLogger } from './logger';

const log = createLogger('test', 'silent');

/** One call over the network with exactly the given metadata (never this process's credential). */
async function callAsStranger(
  address: string,
  definition: unknown,
  method: string,
  request: unknown,
  metadata: Record<string, string> = {},
) {
  const Ctor = makeGenericClientConstructor(definition as ServiceDefinition, 'Stranger');
  const client = new Ctor(address, credentials.createInsecure()) as Client & Record<string, Function>;
  const md = new Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  try {
    return await new Promise<{ code: number; details: string; response?: any }>((resolve) =>
      client[method](request, md, (err: ServiceError | null, response: unknown) =>
        resolve(err ? { code: err.code, details: err.details } : { code: 0, details: '', response }),
      ),
    );
  } finally {
    client.close();
  }
}
const SA = { id: 42, login: 'billing-bot', isAdmin: false };
const SA_TOKEN = 'sa-token-of-billing-bot';
/** A site-wide service account made a site admin. */
const ADMIN_SA = { id: 43, login: 'site-bot', isAdmin: true };
const ADMIN_SA_TOKEN = 'sa-token-of-site-bot';
/** The members the stand-in lists: one who keeps their address private, one who does not. */
/** Objects, users and a tree the stand-in authz answers: org 7 and team 31 are the account's to see, org 8 and team 30 not. */
const OBJECTS = ['organization:7', 'organization:8', 'team:30', 'team:31', 'token:1'];
const USERS = ['organization:8', 'team:30#member', 'team:31#member', 'user:*', 'user:5'];
const treeOf = (object: string): authzV1.UsersetTree => ({
  root: {
    name: `${object}#view`,
    value: {
      $case: 'union',
      value: {
        nodes: [
          { name: `${object}#view`, value: { $case: 'leaf', value: { value: { $case: 'users', value: { users: USERS } } } } },
          {
            name: `${object}#view`,
            value: {
              $case: 'leaf',
              value: {
                value: {
                  $case: 'tupleToUserset',
                  value: {
                    tupleset: `${object}#owner`,
                    computed: [{ userset: 'organization:7#member' }, { userset: 'organization:8#member' }],
                  },
                },
              },
            },
          },
          {
            name: `${object}#view`,
            value: { $case: 'leaf', value: { value: { $case: 'computed', value: { userset: `${object}#manage` } } } },
          },
        ],
      },
    },
  },
});
const MEMBERS = [
  orgsTeamsV1.User.fromPartial({
    id: 5,
    login: 'alice',
    email: 'alice@example.com',
    hideEmail: true,
    isAdmin: true,
    lastLoginUnix: 1_790_000_000,
  }),
  orgsTeamsV1.User.fromPartial({ id: 6, login: 'bob', email: 'bob@example.com', hideEmail: false }),
];

describe('the method-policy table', () => {
  const services = Object.values(proto).flatMap((mod) =>
    typeof mod === 'object' && mod ? Object.entries(mod).filter(([name]) => name.endsWith('ServiceService')) : [],
  ) as [string, Record<string, { path: string }>][];

  it('has a policy for every method of every generated service', () => {
    expect(services.length).toBeGreaterThan(20);
    const missing = services.flatMap(([, definition]) =>
      Object.values(definition)
        .filter((m) => !methodPolicy(m.path))
        .map((m) => m.path),
    );
    expect(missing).toEqual([]);
    for (const [, definition] of services) expect(hasPolicies(Object.values(definition)[0].path.split('/')[1])).toBe(true);
  });

  it('keeps writes of relationships and roles internal, and the checks public', () => {
    const policy = (m: { path: string }) => methodPolicy(m.path)?.access;
    expect(policy(authzV1.AuthzServiceService.writeTuples)).toBe('internal');
    // Reading stored tuples is public as ListUsers is: one object the account sees, its answer cut to what it sees.
    expect(policy(authzV1.AuthzServiceService.readTuples)).toBe('public');
    expect(policy(proto.authzRolesV1.RolesServiceService.assignTeamRoles)).toBe('internal');
    expect(policy(authzV1.AuthzServiceService.check)).toBe('public');
    for (const method of ['listObjects', 'listUsers', 'expand'] as const)
      expect(policy(authzV1.AuthzServiceService[method])).toBe('public');
    expect(policy(authzV1.AuthzServiceService.whoHasAccess)).toBe('internal');
    expect(policy(orgsTeamsOrgsV1.OrganizationsServiceService.listTeams)).toBe('public');
  });
});

describe('a server admitting callers by the method-policy table', () => {
  let server: RunningGrpcServer;
  let address: string;
  /** What the stand-in authz answers to the service account's questions, and what it was asked. */
  let grants: Set<string>;
  let asked: AccessQuestion[][];
  let seenViewer: number;
  let seenPage: unknown;
  const access: CallerAccess = {
    authenticate: async (token) => (token === SA_TOKEN ? SA : token === ADMIN_SA_TOKEN ? ADMIN_SA : undefined),
    holdsEach: async (_account: CallingAccount, questions) => {
      asked.push(questions);
      return questions.map((q) => grants.has(`${q.relation} ${q.object}`));
    },
  };

  beforeAll(async () => {
    server = await startGrpcServer({
      name: 'test',
      port: 0,
      access,
      log,
      protoFiles: ['platformadmin/authz/v1/authz.proto'],
      services: [
        bindService(authzV1.AuthzServiceService, {
          getVersion: async () => ({ version: '1', service: 'test' }),
          check: async () => ({ allowed: true, dependsOn: [] }),
          batchCheck: async (r) => ({ allowed: r.checks.map(() => true), dependsOn: [] }),
          checkPermission: async () => ({ allowed: true, dependsOn: [] }),
          listRelations: async () => ({ relations: [] }),
          writeTuples: async () => ({}),
          // The same tuples of any object, whoever asks: the policy cuts the answer.
          readTuples: async (r) => ({
            tuples: ['user:5', 'team:31#member', 'team:30#member', 'organization:8'].map((user) => ({
              user,
              relation: 'member',
              object: r.object,
            })),
          }),
          permissionCatalog: async () => ({ permissions: [] }),
          // Every object of the type the stand-in knows, whoever asks: the policy cuts the answer.
          listObjects: async (r) => ({ objects: OBJECTS.filter((o) => o.startsWith(`${r.type}:`)) }),
          listUsers: async () => ({ users: USERS }),
          expand: async (r) => ({ tree: treeOf(r.object) }),
          whoHasAccess: async () => ({ permissions: [], dependsOn: [] }),
          describeStore: async () => authzV1.DescribeStoreResponse.fromPartial({}),
        }),
        bindService(orgsTeamsOrgsV1.OrganizationsServiceService, {
          getOrg: async (r: orgsTeamsOrgsV1.GetOrgRequest) => {
            seenViewer = r.viewerId;
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: 7, username: 'acme' });
          },
          listTeams: async (r: orgsTeamsOrgsV1.ListTeamsRequest) => {
            seenPage = r.page;
            return { teams: [], total: 0 };
          },
          listMembers: async () => ({ members: MEMBERS, total: MEMBERS.length }),
          listTeamMembers: async () => ({ members: MEMBERS, total: MEMBERS.length }),
        } as never),
      ],
    });
    address = `127.0.0.1:${server.port}`;
  });
  afterAll(() => server.shutdown(100));
  beforeEach(() => {
    grants = new Set();
    asked = [];
    seenViewer = -1;
  });

  const asAccount = { authorization: `Bearer ${SA_TOKEN}` };
  const tuple = (user: string, object: string) => ({ tuple: { user, relation: 'view', object }, contextualTuples: [] });

  it('listens on loopback only by default', () => {
    expect(address.startsWith('127.0.0.1:')).toBe(true);
  });

  it('answers a platform app every method, internal ones included', async () => {
    const app = { authorization: `Bearer ${appCredential().token()}` };
    const write = await callAsStranger(address, authzV1.AuthzServiceService, 'writeTuples', { writes: [], deletes: [] }, app);
    expect(write.code).toBe(status.OK);
  });

  it('refuses a stranger without credentials, or with an unknown token, with UNAUTHENTICATED', async () => {
    const site = { writes: [{ user: 'user:5', relation: 'admin', object: 'site:platform' }], deletes: [] };
    expect((await callAsStranger(address, authzV1.AuthzServiceService, 'writeTuples', site)).code).toBe(status.UNAUTHENTICATED);
    expect((await callAsStranger(address, authzV1.AuthzServiceService, 'readTuples', {})).code).toBe(status.UNAUTHENTICATED);
    const unknown = await callAsStranger(address, authzV1.AuthzServiceService, 'check', tuple('user:5', 'organization:7'), {
      authorization: 'Bearer revoked-or-made-up',
    });
    expect(unknown.code).toBe(status.UNAUTHENTICATED);
  });

  it('refuses a service account an internal method with PERMISSION_DENIED', async () => {
    const site = { writes: [{ user: `user:${SA.id}`, relation: 'admin', object: 'site:platform' }], deletes: [] };
    const answer = await callAsStranger(address, authzV1.AuthzServiceService, 'writeTuples', site, asAccount);
    expect(answer).toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('internal') });
  });

  it('answers a service account a check about an object it can see, and refuses one it cannot', async () => {
    grants.add('access organization:7');
    const seen = await callAsStranger(address, authzV1.AuthzServiceService, 'check', tuple('user:5', 'organization:7'), asAccount);
    expect(seen).toMatchObject({ code: status.OK, response: { allowed: true } });
    expect(asked).toEqual([[{ relation: 'access', object: 'organization:7' }]]);
    const unseen = await callAsStranger(address, authzV1.AuthzServiceService, 'check', tuple('user:5', 'organization:8'), asAccount);
    expect(unseen.code).toBe(status.PERMISSION_DENIED);
  });

  it('answers a service account about itself without asking, and never about a user object of someone else', async () => {
    const self = await callAsStranger(address, authzV1.AuthzServiceService, 'check', tuple(`user:${SA.id}`, 'organization:9'), asAccount);
    expect(self.code).toBe(status.OK);
    expect(asked).toEqual([]);
    const other = await callAsStranger(address, authzV1.AuthzServiceService, 'check', tuple('user:5', 'user:6'), asAccount);
    expect(other.code).toBe(status.PERMISSION_DENIED);
  });

  it('asks every object of a batch', async () => {
    grants.add('access organization:7');
    const batch = { checks: [tuple('user:5', 'organization:7'), tuple('user:5', 'team:3')] };
    expect((await callAsStranger(address, authzV1.AuthzServiceService, 'batchCheck', batch, asAccount)).code).toBe(
      status.PERMISSION_DENIED,
    );
    grants.add('view team:3');
    expect((await callAsStranger(address, authzV1.AuthzServiceService, 'batchCheck', batch, asAccount)).code).toBe(status.OK);
  });

  it('answers an organization read as the service account may see it, whatever viewer it names', async () => {
    const answer = await callAsStranger(
      address,
      orgsTeamsOrgsV1.OrganizationsServiceService,
      'getOrg',
      { name: 'acme', viewerId: 1 },
      asAccount,
    );
    expect(answer.code).toBe(status.OK);
    expect(seenViewer).toBe(SA.id);
  });

  describe('contextual tuples: what a question adds is held to what the account sees', () => {
    /** Org B (7) is the account's; team 30 is org A's private team, team 31 org B's own. */
    const withAdded = (
      user: string,
      object: string,
      added: { user: string; relation: string; object: string }[],
      contextJson?: string,
    ) => ({
      tuple: { user, relation: 'member', object },
      contextualTuples: added,
      ...(contextJson !== undefined && { contextJson }),
    });
    beforeEach(() => {
      grants.add('access organization:7');
      grants.add('view team:31');
    });

    it("refuses a check that puts another organization's private team into the account's own organization", async () => {
      const probe = withAdded('user:5', 'organization:7', [{ user: 'team:30#member', relation: 'member', object: 'organization:7' }]);
      const answer = await callAsStranger(address, authzV1.AuthzServiceService, 'check', probe, asAccount);
      expect(answer).toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('view on team:30') });
      // The same in a batch, beside a question the account may ask, and about the account itself.
      const batch = { checks: [tuple('user:5', 'organization:7'), probe] };
      expect((await callAsStranger(address, authzV1.AuthzServiceService, 'batchCheck', batch, asAccount)).code).toBe(
        status.PERMISSION_DENIED,
      );
      const aboutItself = withAdded(`user:${SA.id}`, 'organization:9', [{ user: 'user:5', relation: 'member', object: 'team:30' }]);
      expect((await callAsStranger(address, authzV1.AuthzServiceService, 'check', aboutItself, asAccount)).code).toBe(
        status.PERMISSION_DENIED,
      );
    });

    it('refuses an organization it cannot see standing as a user, in a contextual tuple or the question, and objects named by a context', async () => {
      const asOwner = withAdded('user:5', 'organization:7', [{ user: 'organization:8', relation: 'owner', object: 'cluster:c1' }]);
      expect((await callAsStranger(address, authzV1.AuthzServiceService, 'check', asOwner, asAccount)).code).toBe(status.PERMISSION_DENIED);
      const userset = { tuple: { user: 'team:30#member', relation: 'member', object: 'organization:7' }, contextualTuples: [] };
      expect((await callAsStranger(address, authzV1.AuthzServiceService, 'check', userset, asAccount)).code).toBe(status.PERMISSION_DENIED);
      const named = withAdded('user:5', 'organization:7', [], JSON.stringify({ team: 'team:30' }));
      expect((await callAsStranger(address, authzV1.AuthzServiceService, 'check', named, asAccount)).code).toBe(status.PERMISSION_DENIED);
      const onUser = withAdded('user:5', 'organization:7', [{ user: 'user:5', relation: 'member', object: 'user:6' }]);
      expect(await callAsStranger(address, authzV1.AuthzServiceService, 'check', onUser, asAccount)).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('contextual tuple'),
      });
    });

    it("answers contextual tuples naming the account's own organization's objects, asking each once", async () => {
      const own = withAdded(
        'user:5',
        'organization:7',
        [
          { user: 'team:31#member', relation: 'member', object: 'organization:7' },
          { user: 'user:5', relation: 'member', object: 'team:31' },
        ],
        JSON.stringify({ at: '2027-01-01T00:00:00Z' }),
      );
      expect(await callAsStranger(address, authzV1.AuthzServiceService, 'check', own, asAccount)).toMatchObject({
        code: status.OK,
        response: { allowed: true },
      });
      expect(asked).toEqual([
        [
          { relation: 'access', object: 'organization:7' },
          { relation: 'view', object: 'team:31' },
        ],
      ]);
    });

    it("lets the platform's own apps add any contextual tuple", async () => {
      const probe = withAdded('user:5', 'organization:7', [{ user: 'team:30#member', relation: 'member', object: 'organization:7' }]);
      const app = { authorization: `Bearer ${appCredential().token()}` };
      expect((await callAsStranger(address, authzV1.AuthzServiceService, 'check', probe, app)).code).toBe(status.OK);
    });
  });

  describe('ListObjects, ListUsers and Expand: the Checks they stand for, and nothing beyond what the account sees', () => {
    const authz = (method: string, request: object, metadata: Record<string, string> = asAccount) =>
      callAsStranger(address, authzV1.AuthzServiceService, method, request, metadata);
    const listObjects = (user: string, type: string, contextualTuples: object[] = []) =>
      authz('listObjects', { user, relation: 'view', type, contextualTuples, contextJson: '' });
    beforeEach(() => {
      grants.add('access organization:7');
      grants.add('view team:31');
    });

    it('lists objects about someone else cut to those the account sees, asking each at once', async () => {
      expect(await listObjects('user:5', 'organization')).toMatchObject({ code: status.OK, response: { objects: ['organization:7'] } });
      expect(asked).toEqual([
        [
          { relation: 'access', object: 'organization:7' },
          { relation: 'access', object: 'organization:8' },
        ],
      ]);
      expect((await listObjects('user:5', 'team')).response.objects).toEqual(['team:31']);
      // A type it can never see, about someone else, is refused as the Check would be.
      expect(await listObjects('user:5', 'token')).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('token'),
      });
      // So is a userset or an object as user it does not see.
      expect((await listObjects('team:30#member', 'organization')).code).toBe(status.PERMISSION_DENIED);
      expect((await listObjects('organization:8', 'team')).code).toBe(status.PERMISSION_DENIED);
    });

    it('lists objects about itself whole, as Check answers about itself, but holds what it adds to its rule', async () => {
      expect((await listObjects(`user:${SA.id}`, 'organization')).response.objects).toEqual(['organization:7', 'organization:8']);
      expect((await listObjects(`user:${SA.id}`, 'token')).response.objects).toEqual(['token:1']);
      expect(asked).toEqual([]);
      const added = [{ user: 'team:30#member', relation: 'member', object: 'organization:7' }];
      expect(await listObjects(`user:${SA.id}`, 'organization', added)).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('view on team:30'),
      });
      const named = await authz(
        'listObjects',
        authzV1.ListObjectsRequest.fromPartial({ user: 'user:5', relation: 'view', type: 'organization', contextJson: '{"t":"team:30"}' }),
      );
      expect(named.code).toBe(status.PERMISSION_DENIED);
    });

    it('lists users of an object it sees, without the usersets and objects it does not see, and refuses other objects', async () => {
      const listUsers = (object: string, contextualTuples: object[] = []) =>
        authz('listUsers', { object, relation: 'member', userFilters: [{ type: 'user' }], contextualTuples, contextJson: '' });
      expect(await listUsers('organization:7')).toMatchObject({
        code: status.OK,
        response: { users: ['team:31#member', 'user:*', 'user:5'] },
      });
      expect(await listUsers('organization:8')).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('organization:8'),
      });
      // Not even about itself: the answer is about everyone.
      expect((await listUsers(`user:${SA.id}`)).code).toBe(status.PERMISSION_DENIED);
      expect((await listUsers('organization:7', [{ user: 'user:5', relation: 'member', object: 'team:30' }])).code).toBe(
        status.PERMISSION_DENIED,
      );
    });

    it('expands an object it sees with only the usersets and parents it sees, and refuses other objects', async () => {
      const expanded = await authz('expand', { object: 'organization:7', relation: 'view', contextualTuples: [] });
      expect(expanded.code).toBe(status.OK);
      const leaves = (expanded.response as { tree: authzV1.UsersetTree }).tree.root!.value!;
      expect(
        leaves.$case === 'union' && leaves.value.nodes.map((n) => (n.value?.$case === 'leaf' ? n.value.value.value : undefined)),
      ).toEqual([
        { $case: 'users', value: { users: ['team:31#member', 'user:*', 'user:5'] } },
        { $case: 'tupleToUserset', value: { tupleset: 'organization:7#owner', computed: [{ userset: 'organization:7#member' }] } },
        { $case: 'computed', value: { userset: 'organization:7#manage' } },
      ]);
      expect((await authz('expand', { object: 'organization:8', relation: 'view', contextualTuples: [] })).code).toBe(
        status.PERMISSION_DENIED,
      );
      expect((await authz('expand', { object: 'token:1', relation: 'view', contextualTuples: [] })).code).toBe(status.PERMISSION_DENIED);
    });

    it('reads the tuples of an object it sees without the usersets and objects it does not see, and no other read', async () => {
      const read = (object: string, user = '') => authz('readTuples', { object, relation: '', user });
      expect(await read('organization:7')).toMatchObject({ code: status.OK });
      expect((await read('organization:7')).response.tuples.map((t: authzV1.TupleKey) => t.user)).toEqual(['user:5', 'team:31#member']);
      expect(await read('organization:8')).toMatchObject({
        code: status.PERMISSION_DENIED,
        details: expect.stringContaining('organization:8'),
      });
      // Every tenant's tuples, or a whole type's, are never read to be cut.
      for (const everyone of ['', 'organization:']) expect((await read(everyone)).code).toBe(status.PERMISSION_DENIED);
      // A user filter is held as a Check's user: a userset it does not see is refused; about itself, any object.
      expect((await read('organization:7', 'team:30#member')).code).toBe(status.PERMISSION_DENIED);
      expect((await read('organization:8', `user:${SA.id}`)).code).toBe(status.OK);
    });

    it("answers the platform's own apps whole", async () => {
      const app = { authorization: `Bearer ${appCredential().token()}` };
      const objects = authzV1.ListObjectsRequest.fromPartial({ user: 'user:5', relation: 'view', type: 'organization' });
      expect((await authz('listObjects', objects, app)).response.objects).toEqual(['organization:7', 'organization:8']);
      const users = authzV1.ListUsersRequest.fromPartial({ object: 'organization:8', relation: 'member' });
      expect((await authz('listUsers', users, app)).response.users).toEqual(USERS);
      expect(asked).toEqual([]);
    });
  });

  it("answers members to a service account with others' e-mail addresses and account flags hidden, and whole to a site admin and the platform", async () => {
    grants.add('access organization:7');
    grants.add('list_members team:3');
    const seen = async (method: string, request: object, metadata: Record<string, string>) => {
      const answer = await callAsStranger(address, orgsTeamsOrgsV1.OrganizationsServiceService, method, request, metadata);
      expect(answer).toMatchObject({ code: status.OK });
      return (answer.response.members as orgsTeamsV1.User[]).map((m) => `${m.login}:${m.email}:${m.isAdmin}:${m.lastLoginUnix}`);
    };
    const whole = ['alice:alice@example.com:true:1790000000', 'bob:bob@example.com:false:0'];
    for (const [method, request] of [
      ['listMembers', orgsTeamsOrgsV1.ListMembersRequest.fromPartial({ orgId: 7 })],
      ['listTeamMembers', orgsTeamsOrgsV1.ListTeamMembersRequest.fromPartial({ teamId: 3 })],
    ] as const) {
      expect(await seen(method, request, asAccount)).toEqual(['alice::false:0', 'bob::false:0']);
      expect(await seen(method, request, { authorization: `Bearer ${ADMIN_SA_TOKEN}` })).toEqual(whole);
      expect(await seen(method, request, { authorization: `Bearer ${appCredential().token()}` })).toEqual(whole);
    }
  });

  it('answers a service account one page of a list at most, whatever it asks', async () => {
    grants.add('list_team organization:7');
    const ask = (page?: object) =>
      callAsStranger(address, orgsTeamsOrgsV1.OrganizationsServiceService, 'listTeams', { orgId: 7, page }, asAccount);
    expect((await ask()).code).toBe(status.OK);
    expect(seenPage).toEqual({ page: 1, limit: 50 });
    await ask({ page: 3, limit: 10_000 });
    expect(seenPage).toEqual({ page: 3, limit: 200 });
    // The platform's own apps read whole lists.
    await callAsStranger(
      address,
      orgsTeamsOrgsV1.OrganizationsServiceService,
      'listTeams',
      { orgId: 7 },
      { authorization: `Bearer ${appCredential().token()}` },
    );
    expect(seenPage).toBeUndefined();
  });
});

describe('the credential cache', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps an account until orgs-teams says it changed, and keeps nothing while the bus is away', async () => {
    const bus = new InProcessBus();
    const cache = new CredentialCache(60_000);
    const stop = await cache.follow(bus);
    let asks = 0;
    const ask = async () => (asks++, SA);
    await cache.answer(SA_TOKEN, ask);
    await cache.answer(SA_TOKEN, ask);
    expect(asks).toBe(1);
    // A token of the account deleted: the notice evicts, the next call asks again (and learns it is gone).
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [SA.id] });
    expect(await cache.answer(SA_TOKEN, async () => (asks++, undefined))).toBeUndefined();
    expect(asks).toBe(2);
    // Another account's notice leaves this one kept.
    await cache.answer(SA_TOKEN, ask);
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [SA.id + 1] });
    await cache.answer(SA_TOKEN, ask);
    expect(asks).toBe(3);
    // The notice meaning every account (a write that did not record which) evicts it too.
    await bus.notify(ACCOUNTS_CHANGED, { userIds: [], all: true });
    await cache.answer(SA_TOKEN, ask);
    expect(asks).toBe(4);
    await stop();
  });

  it('never keeps a Kubernetes token past its own expiry', async () => {
    // On fake time (Date for the token's expiry, performance.now() for the cache's own lifetime: both jest's), a
    // moment in, since the cache takes an answer stamped at 0 for one stamped never.
    jest.useFakeTimers({ now: 1_790_000_000_000, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    jest.advanceTimersByTime(1);
    const bus = new InProcessBus();
    const cache = new CredentialCache(60_000);
    const stop = await cache.follow(bus);
    const jwt = (exp: number) => `e30.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.c2ln`;
    let asks = 0;
    const ask = async () => (asks++, SA);
    const soon = jwt(1_790_000_002); // 1,999 ms from now
    await cache.answer(soon, ask);
    await jest.advanceTimersByTimeAsync(1_998);
    await cache.answer(soon, ask);
    expect(asks).toBe(1);
    await jest.advanceTimersByTimeAsync(2);
    await cache.answer(soon, ask);
    expect(asks).toBe(2);
    // Expired already: never kept.
    const expired = jwt(Math.floor(Date.now() / 1_000) - 5);
    await cache.answer(expired, ask);
    await cache.answer(expired, ask);
    expect(asks).toBe(4);
    await stop();
  });

  it('does not keep what was read while a notice evicted the account', async () => {
    const bus = new InProcessBus();
    const cache = new CredentialCache(60_000);
    const stop = await cache.follow(bus);
    await cache.answer(SA_TOKEN, async () => {
      await bus.notify(ACCOUNTS_CHANGED, { userIds: [SA.id] });
      return SA;
    });
    expect(cache.size).toBe(0);
    await stop();
  });
});
