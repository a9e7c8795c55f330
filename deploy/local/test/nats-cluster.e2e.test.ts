// Freshness across a NATS cluster: two replicas each of the gateway, orgs-teams and authz on one Postgres database,
// each replica set on a different node of a three-node NATS cluster (JetStream, the notice stream replicated on all
// three). A role, a membership, a token and an organization are revoked through one gateway and read through the
// other at once: the very next request is refused (or finds nothing), with all three nodes up and again after the
// node leading the notice stream was killed.
//
// Replica set A is the whole platform (startPlatform); replica set B is a second authz, orgs-teams and gateway,
// started in the same process for run time's sake, but each with its own NATS connection (to another node first),
// caches, gRPC and HTTP ports; B's gateway calls B's orgs-teams and authz, and B's orgs-teams B's authz.
import { streamOf } from '@platform/bus';
import { createTestDatabase, eventually, startPrivateNatsCluster, type PrivateNatsCluster } from '@platform/testing';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startPlatform, type LocalPlatform } from '../src/platform';
import { startReplicaSet, type ReplicaSet } from './replica-set';
import { basic } from './harness';

const ROOT_PASSWORD = 'root-password';

interface Reply {
  status: number;
  body: any;
}

describe('revocations on a NATS cluster: refused on the very next request to the other replica', () => {
  let cluster: PrivateNatsCluster;
  let drop: (() => Promise<void>) | undefined;
  let platform: LocalPlatform | undefined;
  let setB: ReplicaSet | undefined;
  /** The entry URL of each gateway. */
  const gateway = { a: '', b: '' };
  const tokens: Record<string, string> = {};

  const call = async (
    via: 'a' | 'b',
    who: string | undefined,
    method: string,
    route: string,
    json?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const h = new Headers(headers);
    if (who) h.set('authorization', `token ${tokens[who]}`);
    if (json !== undefined) h.set('content-type', 'application/json');
    const res = await fetch(`${gateway[via]}api/v1${route}`, {
      method,
      headers: h,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
  };
  const tokenFor = async (login: string, password: string, name: string) => {
    const res = await call('a', undefined, 'POST', `/users/${login}/tokens`, { name }, { authorization: basic(login, password) });
    if (res.status !== 201) throw new Error(`token for ${login}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number; sha1: string };
  };
  /** Every replica's bus is connected (after a node was lost, those on it have moved to another). */
  const allConnected = () =>
    eventually(
      async () => [...platform!.apps.values(), ...(setB?.replicas ?? [])].every((r) => !r.ctx.bus || r.ctx.bus.health().connected),
      20_000,
      50,
    );

  beforeAll(async () => {
    cluster = await startPrivateNatsCluster(3);
    const db = await createTestDatabase();
    drop = db.drop;
    const urls = cluster.nodes.map((n) => n.url);
    const env = {
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: ROOT_PASSWORD,
      PLATFORM_ADMIN_EMAIL: 'root@example.com',
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'platform-nats-cluster-')),
      // One key for both replica sets, as one release's pods share it.
      PLATFORM_APP_KEYS: randomBytes(32).toString('base64'),
    };
    platform = await startPlatform({ ...env, HTTP_PORT: '0', NATS_URL: urls.join(',') });
    gateway.a = platform.url;

    setB = await startReplicaSet(platform, {
      ...env,
      // Another node first: the two replica sets talk to different servers.
      NATS_URL: [urls[2], urls[1], urls[0]].join(','),
    });
    gateway.b = setB.url;

    tokens.root = (await tokenFor('root', ROOT_PASSWORD, 'admin')).sha1;
    for (const login of ['alice', 'bob']) {
      const created = await call('a', 'root', 'POST', '/admin/users', {
        username: login,
        email: `${login}@example.com`,
        password: `${login}-password`,
      });
      expect(created.status).toBe(201);
      tokens[login] = (await tokenFor(login, `${login}-password`, 'cli')).sha1;
    }
    await allConnected();
  }, 120_000);

  afterAll(async () => {
    await setB?.stop();
    await platform?.stop().catch(() => {});
    await drop?.();
    await cluster?.dispose();
  }, 60_000);

  /** Each revocation, written through gateway A and read through gateway B at once; `tag` keeps names apart per run. */
  const revocations = (tag: string) => {
    it(`a role taken from a team (${tag})`, async () => {
      const org = `roles-${tag}`;
      expect((await call('a', 'alice', 'POST', '/orgs', { username: org })).status).toBe(201);
      const ops = (await call('a', 'alice', 'POST', `/orgs/${org}/teams`, { name: 'ops', type: 'general' })).body.id;
      const role = await call('a', 'alice', 'POST', `/authz/roles?org=${org}`, {
        name: 'editors',
        permissions: [{ namespace: 'org', action: 'edit' }],
        teamIDs: [ops],
      });
      expect(role.status).toBe(201);
      expect((await call('a', 'alice', 'PUT', `/teams/${ops}/members/bob`)).status).toBe(204);
      // Answered by B twice: the decision is kept by B's gateway and B's authz.
      expect((await call('b', 'bob', 'PATCH', `/orgs/${org}`, { description: 'by bob' })).status).toBe(200);
      expect((await call('b', 'bob', 'PATCH', `/orgs/${org}`, { description: 'by bob again' })).status).toBe(200);
      expect((await call('a', 'alice', 'PATCH', `/teams/${ops}`, { name: 'ops', assignedRoleIDs: [] })).status).toBe(200);
      expect((await call('b', 'bob', 'PATCH', `/orgs/${org}`, { description: 'no longer' })).status).toBe(403);
    });

    it(`a role given and taken 20 times in a row, each change read through the other gateway at once (${tag})`, async () => {
      const org = `flips-${tag}`;
      expect((await call('a', 'alice', 'POST', '/orgs', { username: org })).status).toBe(201);
      const crew = (await call('a', 'alice', 'POST', `/orgs/${org}/teams`, { name: 'crew', type: 'general' })).body.id;
      const role = await call('a', 'alice', 'POST', `/authz/roles?org=${org}`, {
        name: 'editors',
        permissions: [{ namespace: 'org', action: 'edit' }],
        teamIDs: [],
      });
      expect(role.status).toBe(201);
      expect((await call('a', 'alice', 'PUT', `/teams/${crew}/members/bob`)).status).toBe(204);
      const late: string[] = [];
      for (let n = 0; n < 20; n++) {
        expect((await call('a', 'alice', 'PATCH', `/teams/${crew}`, { name: 'crew', assignedRoleIDs: [role.body.id] })).status).toBe(200);
        if ((await call('b', 'bob', 'PATCH', `/orgs/${org}`, { description: `given ${n}` })).status !== 200) late.push(`given ${n}`);
        expect((await call('a', 'alice', 'PATCH', `/teams/${crew}`, { name: 'crew', assignedRoleIDs: [] })).status).toBe(200);
        if ((await call('b', 'bob', 'PATCH', `/orgs/${org}`, { description: `taken ${n}` })).status !== 403) late.push(`taken ${n}`);
      }
      expect(late).toEqual([]);
    }, 60_000);

    it(`a membership (${tag})`, async () => {
      const org = `members-${tag}`;
      expect((await call('a', 'alice', 'POST', '/orgs', { username: org, visibility: 'private' })).status).toBe(201);
      const crew = (await call('a', 'alice', 'POST', `/orgs/${org}/teams`, { name: 'crew', type: 'general' })).body.id;
      expect((await call('a', 'alice', 'PUT', `/teams/${crew}/members/bob`)).status).toBe(204);
      for (let i = 0; i < 2; i++) {
        expect((await call('b', 'bob', 'GET', `/orgs/${org}`)).status).toBe(200);
        expect((await call('b', 'bob', 'GET', `/orgs/${org}/members`)).status).toBe(200);
      }
      expect((await call('a', 'alice', 'DELETE', `/orgs/${org}/members/bob`)).status).toBe(204);
      expect((await call('b', 'bob', 'GET', `/orgs/${org}`)).status).toBe(404);
      expect((await call('b', 'bob', 'GET', `/orgs/${org}/members`)).status).toBe(404);
    });

    it(`a token (${tag})`, async () => {
      const token = await tokenFor('bob', 'bob-password', `short-lived-${tag}`);
      const me = () => fetch(`${gateway.b}api/v1/user`, { headers: { authorization: `token ${token.sha1}` } });
      expect((await me()).status).toBe(200);
      expect((await me()).status).toBe(200);
      const deleted = await call('a', undefined, 'DELETE', `/users/bob/tokens/${token.id}`, undefined, {
        authorization: basic('bob', 'bob-password'),
      });
      expect(deleted.status).toBe(204);
      expect((await me()).status).toBe(401);
    });

    it(`an organization's edit, a team's rename and a role's rename, each read through the other gateway at once, 20 times (${tag})`, async () => {
      const org = `edits-${tag}`;
      expect((await call('a', 'alice', 'POST', '/orgs', { username: org })).status).toBe(201);
      const crew = (await call('a', 'alice', 'POST', `/orgs/${org}/teams`, { name: 'crew', type: 'general' })).body.id;
      const role = await call('a', 'alice', 'POST', `/authz/roles?org=${org}`, { name: 'role-0', permissions: [] });
      expect(role.status).toBe(201);
      const stale: string[] = [];
      for (let n = 1; n <= 20; n++) {
        // Written through one gateway (alternately), read through the other: both keep what they read.
        const [write, read] = n % 2 ? (['a', 'b'] as const) : (['b', 'a'] as const);
        expect((await call(write, 'alice', 'PATCH', `/orgs/${org}`, { description: `edit ${n}` })).status).toBe(200);
        const seen = (await call(read, 'alice', 'GET', `/orgs/${org}`)).body.description;
        if (seen !== `edit ${n}`) stale.push(`organization ${n}: ${seen}`);
        expect((await call(write, 'alice', 'PATCH', `/teams/${crew}`, { name: `crew-${n}` })).status).toBe(200);
        const team = (await call(read, 'alice', 'GET', `/teams/${crew}`)).body.name;
        if (team !== `crew-${n}`) stale.push(`team ${n}: ${team}`);
        expect((await call(write, 'alice', 'PUT', `/authz/roles/${role.body.id}?org=${org}`, { name: `role-${n}` })).status).toBe(200);
        const named = (await call(read, 'alice', 'GET', `/authz/roles/${role.body.id}?org=${org}`)).body.name;
        if (named !== `role-${n}`) stale.push(`role ${n}: ${named}`);
      }
      expect(stale).toEqual([]);
    });

    it(`a deleted organization (${tag})`, async () => {
      const org = `doomed-${tag}`;
      expect((await call('a', 'alice', 'POST', '/orgs', { username: org, description: 'soon gone' })).status).toBe(201);
      for (let i = 0; i < 2; i++) {
        expect((await call('b', 'alice', 'GET', `/orgs/${org}`)).body.description).toBe('soon gone');
        expect((await call('b', 'bob', 'GET', `/orgs/${org}`)).status).toBe(200);
      }
      expect((await call('a', 'alice', 'DELETE', `/orgs/${org}`)).status).toBe(204);
      expect((await call('b', 'alice', 'GET', `/orgs/${org}`)).status).toBe(404);
      expect((await call('b', 'bob', 'GET', `/orgs/${org}`)).status).toBe(404);
    });
  };

  describe('with all three nodes up', () => {
    revocations('all-up');
  });

  describe('with the node leading the notice stream killed', () => {
    beforeAll(async () => {
      // The installation's notice stream, named in its namespace.
      const notices = streamOf('notices', platform!.apps.get('gateway')!.ctx.bus!.namespace).name;
      const leader = await cluster.streamLeader(notices);
      expect(leader).toBeDefined();
      await cluster.nodes[leader!].kill();
      // The stream elects another leader, and the replicas on the lost node reconnect to the others.
      await allConnected();
      await eventually(async () => (await cluster.streamLeader(notices)) !== undefined, 30_000, 200);
      // Reads work again through both gateways (kept answers are trusted once a fence comes back).
      for (const via of ['a', 'b'] as const)
        await eventually(async () => (await call(via, 'alice', 'GET', '/user')).status === 200, 20_000, 100);
    }, 60_000);

    revocations('one-down');
  });
});
