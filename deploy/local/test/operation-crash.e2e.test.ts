import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, eventually, testNatsUrl } from '@platform/testing';
import { interrupt, killLaunched, npmStart, type StartedLauncher } from './launcher';
import { platformTemplate } from './platform-template';

// Client-org creation and hub enrolment are operations across orgs-teams and clusters. A process killed between
// their steps must leave all of the operation or none of it once the platform is back: the launcher runs as
// `npm start` does, with a test-only fault that SIGKILLs the process right after a step, and the next start's outbox
// relay carries the operation on. A client org is finished (its admin user and organization were made; nothing
// secret was lost); an enrolment is taken back (the bus seed was never answered, so its account is revoked).

const PASSWORD = 'crash-admin-password';

async function call(url: string, auth: string, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}api/v1${p}`, {
    method,
    headers: { authorization: auth, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const clientOrg = (name: string) => ({
  clientOrg: { orgName: name, orgFullName: `${name} Inc.` },
  hubClusterUID: HUB_UID,
  hubClusterOwnerName: 'acme',
  userPermission: {
    userName: `${name}-admin`,
    email: `${name}-admin@example.com`,
    permissions: [{ name: 'hub', isClusterSet: false, roleType: 'ClusterRole', roleRefName: 'view' }],
    importCluster: false,
    clientOrg: true,
  },
});
const HUB_UID = '6f0e8c1a-2b3d-4e5f-8a9b-0c1d2e3f4a5b';
const EDGE_UID = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

describe.each([
  ['the embedded database', false],
  ['Postgres and NATS', true],
])('a crash between the steps of an operation, on %s', (_name, real) => {
  let dataDir: string;
  let env: Record<string, string>;
  let drop = async () => {};
  let running: StartedLauncher | undefined;
  let auth = '';
  const api = (method: string, p: string, body?: unknown) => call(running!.url, auth, method, p, body);
  /** Starts the platform; with a fault, the next request reaching that step kills it. */
  const start = async (fault?: string) => {
    running = await npmStart({ ...env, OUTBOX_RELAY_INTERVAL_MS: '200', ...(fault && { PLATFORM_TEST_FAULT: fault }) });
  };
  /** Sends a request the fault kills: no answer comes back, and the process is gone. */
  const killedBy = async (method: string, p: string, body: unknown) => {
    await expect(api(method, p, body)).rejects.toThrow();
    await running!.exited;
  };

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-operation-crash-'));
    env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      PLATFORM_ADMIN_USERNAME: 'root',
      PLATFORM_ADMIN_PASSWORD: PASSWORD,
      OUTBOX_LEASE_MS: '1000',
    };
    if (real) {
      // A copy of the migrated template (platform-template.ts), as empty of data as a new database: the crash is under
      // test here, not the first migration.
      const db = await createTestDatabase({ template: await platformTemplate() });
      drop = db.drop;
      env.DATABASE_URL = db.url;
      env.NATS_URL = await testNatsUrl();
    }
  });
  afterAll(async () => {
    killLaunched();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await drop();
  });

  it('finishes a client org or an enrolment, or leaves nothing of it, whatever step the process died after', async () => {
    // An enrolment killed once its bus account is issued: nobody has the seed, so the account is revoked.
    await start('enrolment-after-bus-account');
    const basic = `Basic ${Buffer.from(`root:${PASSWORD}`).toString('base64')}`;
    auth = `token ${(await call(running!.url, basic, 'POST', '/users/root/tokens', { name: 'crash' })).body.sha1}`;
    expect((await api('POST', '/orgs', { username: 'acme' })).status).toBe(201);
    await killedBy('POST', '/orgs/acme/clusters', { name: 'edge', uid: EDGE_UID });

    // A client org killed once its admin user is made: the relay makes the organization and the record.
    await start('client-org-after-admin-user');
    await eventually(async () => {
      const accounts = (await api('GET', '/orgs/acme/tokens/bus-tokens')).body as { clusterID: string; revoked: boolean }[];
      return accounts.some((a) => a.clusterID === EDGE_UID) && accounts.every((a) => a.revoked);
    }, 15_000);
    expect((await api('GET', '/orgs/acme/clusters')).body).toEqual([]);
    // The name and uid are free again: the enrolment succeeds this time.
    const edge = await api('POST', '/orgs/acme/clusters', { name: 'edge', uid: EDGE_UID });
    expect(edge).toMatchObject({ status: 201, body: { cluster: { name: 'edge' }, bus: { seed: expect.any(String) } } });
    expect((await api('POST', '/orgs/acme/clusters', { name: 'hub', uid: HUB_UID, managerEndpoint: 'https://mcm.acme' })).status).toBe(201);
    await killedBy('POST', '/user/client/create', clientOrg('first'));

    // A client org killed once its organization is made: the relay records it.
    await start('client-org-after-org');
    await eventually(async () => (await api('GET', '/user/client/first/status')).body?.status === 'Active', 15_000);
    await killedBy('POST', '/user/client/create', clientOrg('second'));

    await start();
    try {
      await eventually(async () => (await api('GET', '/user/client/second/status')).body?.status === 'Active', 15_000);
      for (const name of ['first', 'second']) {
        expect((await api('GET', `/orgs/${name}`)).body).toMatchObject({ username: name, full_name: `${name} Inc.` });
        // Made by the operation, owned by its admin user, and listed once.
        const members = (await api('GET', `/orgs/${name}/members`)).body as { login: string }[];
        expect(members.map((m) => m.login)).toEqual([`${name}-admin`]);
        expect((await api('POST', '/user/client/create', clientOrg(name))).status).toBe(409);
      }
      expect(((await api('GET', '/user/clients')).body as { username: string }[]).map((o) => o.username)).toEqual(['first', 'second']);
      // The enrolled hubs are the two that succeeded, and only their accounts are active.
      expect(((await api('GET', '/orgs/acme/clusters')).body as { name: string }[]).map((c) => c.name).sort()).toEqual(['edge', 'hub']);
      const active = ((await api('GET', '/orgs/acme/tokens/bus-tokens')).body as { id: number; revoked: boolean }[]).filter(
        (a) => !a.revoked,
      );
      expect(active).toHaveLength(2);
      expect(active.map((a) => a.id)).toContain(edge.body.bus.accountID);
    } finally {
      expect(await interrupt(running!.child)).toBe(0);
    }
  }, 240_000);
});
