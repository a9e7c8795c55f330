import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { clustersV1 } from '@platform/proto';
import { createClient, useAppKeys, type PromiseClient } from '@platform/service-kit';
import { createTestDatabase, eventually } from '@platform/testing';
import { basic } from './harness';
import { interrupt, killLaunched, npmStart, type StartedLauncher } from './launcher';
import { platformTemplate } from './platform-template';

/**
 * DEMO_SEED_MANIFEST=<path> npm start: the launcher as npm starts it, on the in-process bus of
 * the embedded default, seeds a demo and writes the manifest; every name in it is found through the clusters
 * service's RPCs (its port found among the server's listening sockets), the REST API and billing-dashboard's tables
 * (no read RPC for them yet: the platform runs on a fresh Postgres database so the test can read them); the
 * owner's public membership, the organization's manager sync token and the used-up contract's document answer
 * over REST. A second start on the same DATA_DIR (and database) duplicates nothing.
 */
const ADMIN_PASSWORD = 'demo-admin-password';
const APP_KEY = randomBytes(32).toString('base64');
useAppKeys([APP_KEY], 'demo-seed-test');

const MANIFEST_KEYS = ['hub', 'namespace', 'outdatedClusterSet', 'owner', 'quotaExceeded', 'sharedGatewayClientOrg', 'spokes', 'usage'];

/** TCP ports a process listens on (Linux: its socket inodes matched against /proc/net/tcp{,6}). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    const lines = fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      // local_address is ip:port in hex; state 0A is LISTEN; column 9 is the inode.
      if (cols[3] === '0A' && inodes.has(cols[9])) ports.add(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return [...ports];
}

/** A client of the clusters service of the running launcher: the listening port whose ClustersService answers GetVersion. */
async function clustersClient(pid: number): Promise<PromiseClient<typeof clustersV1.ClustersServiceService>> {
  for (const port of listeningPorts(pid)) {
    const client = createClient(clustersV1.ClustersServiceService, `127.0.0.1:${port}`, { name: 'clusters', deadlineMs: 2_000 });
    const answer = await client.getVersion({}).catch(() => undefined);
    if (answer?.service === 'clusters') return client;
    client.close();
  }
  throw new Error(`no clusters gRPC server among the ports of pid ${pid}`);
}

async function waitForFile(file: string, launcher: StartedLauncher, timeoutMs: number): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`no manifest at ${file} within ${timeoutMs / 1000} s:\n${launcher.logs()}`);
    if (/demo seed failed/.test(launcher.logs())) throw new Error(`the demo seed failed:\n${launcher.logs()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/**
 * Every case has a database, a DATA_DIR and an in-process bus of its own, so they could run side by side
 * (it.concurrent), but they run one at a time: each launcher's eight apps hold connections of the shared test server
 * (100 at most, for every test file of every worker at once), and two seeds ingesting side by side beside the other
 * workers' files ran it out ("sorry, too many clients already"); two cores start no faster anyway.
 * Each database is a copy of the migrated template (platform-template.ts), as empty of data as a new one: the seed is
 * under test, not the migrations.
 */
const SIDE_BY_SIDE = 1;
let running = 0;
const waiting: (() => void)[] = [];

/** Runs `scenario` once fewer than SIDE_BY_SIDE cases run. */
async function inTurn(scenario: () => Promise<void>): Promise<void> {
  if (running >= SIDE_BY_SIDE) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    await scenario();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

async function caseFixture(prefix: string) {
  const db = await createTestDatabase({ template: await platformTemplate() });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    db,
    dir,
    manifestPath: path.join(dir, 'demo.json'),
    async drop() {
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

afterAll(() => killLaunched());

describe('DEMO_SEED_MANIFEST=<path> npm start', () => {
  it.concurrent(
    'writes a manifest whose every name the services know; a second start duplicates nothing; a failed seed leaves the platform serving',
    () =>
      inTurn(async () => {
        const fixture = await caseFixture('demo-seed-e2e-');
        const sql = new pg.Client({ connectionString: fixture.db.url });
        try {
          await sql.connect();
          await writesManifest(fixture, sql);
        } finally {
          await sql.end();
          await fixture.drop();
        }
      }),
    // Its turn may come after another case's.
    900_000,
  );

  /**
   * On a marketplace deployment the manifest also names at least three installers of its marketplace not
   * yet bound, and, the listener taking the seed's notifications (the secret is set; dev run mode for the first
   * provider, whose notifications are otherwise taken only from its address ranges), a claimable and a claimed
   * claim of subscribers' standalone organizations; a second start names the same ones and binds nothing more.
   * What a second start keeps (the installers still unbound, the claims) is read and written alike for every
   * marketplace (demo-marketplace.ts): it is started again on one of them, the one whose binding differs most.
   */
  it.concurrent.each([
    ['ProviderAMarketplace', '', 'ProviderA', { RUN_MODE: 'dev' }],
    ['ProviderBMarketplace', '; a second start names the same', 'ProviderB', {}],
    ['ProviderCMarketplace', '', 'ProviderC', {}],
  ])(
    'on %s names unbound installers and a claimable and a claimed claim%s',
    (deploymentType, again, marketplace, extra) =>
      inTurn(async () => {
        const fixture = await caseFixture('demo-seed-market-e2e-');
        try {
          await namesInstallers(deploymentType, marketplace, extra, fixture, again !== '');
        } finally {
          await fixture.drop();
        }
      }),
    900_000,
  );
});

type Fixture = Awaited<ReturnType<typeof caseFixture>>;

async function writesManifest({ db, dir, manifestPath }: Fixture, sql: pg.Client): Promise<void> {
  const env = () => ({
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: db.url,
    DEMO_SEED_MANIFEST: manifestPath,
    PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
    // The release's key, which this test holds too: it calls the clusters service as a platform app.
    PLATFORM_APP_KEYS: APP_KEY,
    LOG_LEVEL: 'warn',
  });

  const count = async (table: string, where = '', params: unknown[] = []) =>
    Number((await sql.query(`select count(*)::int as n from ${table} ${where}`, params)).rows[0].n);
  /** Rows of everything the demo makes: a repeat start must leave each the same. */
  const counts = async () => ({
    hubs: await count('clusters.clusters', 'where hub_id is null'),
    clusters: await count('clusters.clusters'),
    namespaces: await count('clusters.cluster_namespaces'),
    licensedProducts: await count('billing.licensed_products'),
    resourceEvents: await count('billing.resource_events'),
    usageSamples: await count('billing.usage_samples'),
    busAccounts: await count('identity.bus_accounts'),
    contracts: await count('contracts.contracts'),
    contractClusters: await count('contracts.contract_clusters'),
    licenses: await count('contracts.issued_licenses'),
    accounts: await count('identity.accounts'),
  });

  const first = await npmStart(env());
  const manifest = await waitForFile(manifestPath, first, 240_000);
  expect(Object.keys(manifest).sort()).toEqual(MANIFEST_KEYS);
  expect(fs.statSync(manifestPath).mode & 0o777).toBe(0o600);
  expect(manifest.spokes.length).toBeGreaterThanOrEqual(3);
  expect(first.logs()).toMatch(/\[platform\] demo seed: manifest written to/);

  // The owner's credentials work, and they see the hub of their organization over REST.
  const { owner, hub, spokes, namespace, usage } = manifest;
  const token = await fetch(`${first.url}api/v1/users/${owner.username}/tokens`, {
    method: 'POST',
    headers: { authorization: basic(owner.username, owner.password), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'e2e' }),
  }).then(async (r) => (expect(r.status).toBe(201), ((await r.json()) as any).sha1));
  const get = (p: string) =>
    fetch(`${first.url}api/v1${p}`, { headers: { authorization: `token ${token}` } }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  const listed = await get(`/orgs/${owner.org}/clusters`);
  expect(listed.status).toBe(200);
  expect(listed.body.map((c: any) => [c.name, c.uid])).toContainEqual([hub.name, hub.uid]);
  // The reports are the organization's: it owns the clusters, and ingestion attributes them to their owner.
  expect((await get(`/orgs/${owner.org}`)).body.id).toBe(usage.uid);

  // Through the clusters service's RPCs: the hub, every spoke under it, the namespace.
  const clusters = await clustersClient(first.pid);
  try {
    expect(await clusters.getCluster({ uid: hub.uid })).toMatchObject({ name: hub.name, hubUid: '' });
    const listedSpokes = (await clusters.listSpokes({ hubUid: hub.uid })).clusters.map((c) => ({ name: c.name, uid: c.uid }));
    expect(listedSpokes).toEqual(expect.arrayContaining(spokes));
    for (const s of spokes)
      expect(await clusters.getSpoke({ hubUid: hub.uid, name: s.name })).toMatchObject({ uid: s.uid, hubUid: hub.uid });
    expect((await clusters.listNamespaces({ clusterUid: hub.uid })).namespaces.map((n) => n.name)).toContain(namespace);
    const usageCluster = await clusters.getCluster({ uid: usage.cid });
    expect(usageCluster.uid).toBe(usage.cid);
  } finally {
    clusters.close();
  }

  // billing-dashboard's tables: license usage, the event (key, version), samples of the object in the month and namespace.
  expect(
    await count('billing.licensed_products', 'where user_id = $1 and cluster_uid = $2 and license_id = $3 and product = $4', [
      usage.uid,
      usage.cid,
      usage.lid,
      usage.product,
    ]),
  ).toBe(1);
  expect(
    await count('billing.resource_events', 'where cluster_uid = $1 and key = $2 and version = $3 and product = $4 and license_id = $5', [
      usage.cid,
      usage.eventKey,
      usage.eventVersion,
      usage.product,
      usage.lid,
    ]),
  ).toBe(1);
  expect(
    await count('billing.usage_samples', 'where cluster_uid = $1 and object_uid = $2 and month = $3 and namespace = $4 and product = $5', [
      usage.cid,
      usage.objectID,
      `${usage.year}-${usage.month}-01`,
      usage.namespace,
      usage.product,
    ]),
  ).toBeGreaterThan(10);
  expect(Number(`${usage.year}${usage.month}`)).toBeLessThan(Number(new Date().toISOString().slice(0, 7).replace('-', '')));
  // Every product has usage samples.
  expect((await sql.query('select distinct product from billing.usage_samples order by product')).rows.map((r) => r.product)).toEqual([
    'productbackup',
    'productdb',
    'productingress',
    'productvault',
  ]);

  // The organization's enterprise contract has its clusters bound and a license for the hub; its contract in
  // quotaExceeded, bound to the hub, is over its quota, so the owner's issue-license for the hub is 403.
  const { quotaExceeded } = manifest;
  expect(quotaExceeded.org).toBe(owner.org);
  const theirs = await get(`/user/contracts?org=${owner.org}`);
  expect(theirs.body.map((c: any) => c.id)).toContain(quotaExceeded.contractID);
  const bound = await get(`/user/contracts/${quotaExceeded.contractID}/clusters?org=${owner.org}`);
  expect(bound.body.map((c: any) => [c.id, c.cluster])).toEqual([[quotaExceeded.ccID, quotaExceeded.cluster]]);
  const refused = await fetch(
    `${first.url}api/v1/user/contracts/${quotaExceeded.contractID}/clusters/${quotaExceeded.ccID}/issue-license?org=${owner.org}`,
    { method: 'POST', headers: { authorization: `token ${token}` } },
  );
  expect(refused.status).toBe(403);
  expect(((await refused.json()) as any).message).toMatch(/used its quota/);
  // The same contract through POST /license/issue, the route a license proxy asks by cluster: the organization's
  // newest contract binding the hub is the used-up one, so the owner gets its 403 there too, and no license.
  const byCluster = await fetch(`${first.url}api/v1/license/issue?org=${owner.org}`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ cluster: quotaExceeded.cluster }),
  });
  expect(byCluster.status).toBe(403);
  expect(((await byCluster.json()) as any).message).toMatch(new RegExp(`contract ${quotaExceeded.contractID} has used its quota`));
  // And without `org`, as the owner would ask: the caller's active contracts are its own and those of the organizations
  // it may issue licenses for (docs/licensing.md), so the organization's used-up contract answers there too.
  const asOwner = await fetch(`${first.url}api/v1/license/issue`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ cluster: quotaExceeded.cluster }),
  });
  expect(asOwner.status).toBe(403);
  expect(((await asOwner.json()) as any).message).toMatch(new RegExp(`contract ${quotaExceeded.contractID} has used its quota`));
  const orgContracts = (await get(`/user/contracts?org=${owner.org}`)).body as any[];
  expect([...new Set(orgContracts.flatMap((c) => c.clusters.map((b: any) => b.cluster)))].sort()).toEqual(
    [hub.uid, ...spokes.map((s: any) => s.uid)].sort(),
  );
  expect(await count('contracts.issued_licenses', 'where cluster_uid = $1', [hub.uid])).toBe(1);

  // What the owner's organization shows: their membership is public (to anyone), the organization has a manager
  // sync token under both its names, and the used-up contract a document, which downloads as a PDF.
  const org = `${first.url}api/v1/orgs/${owner.org}`;
  expect((await fetch(`${org}/public_members/${owner.username}`)).status).toBe(204);
  expect((await fetch(`${org}/public_members`).then((r) => r.json() as Promise<any[]>)).map((m: any) => m.login)).toEqual([owner.username]);
  const syncToken = await get(`/orgs/${owner.org}/manager/sync-token`);
  expect(syncToken).toMatchObject({ status: 200, body: { orgName: owner.org } });
  expect(await get(`/orgs/${owner.org}/manager/user-token`)).toMatchObject({
    status: 200,
    body: { accessKeyID: syncToken.body.accessKeyID },
  });
  const adminToken = await fetch(`${first.url}api/v1/users/admin/tokens`, {
    method: 'POST',
    headers: { authorization: basic('admin', ADMIN_PASSWORD), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'e2e' }),
  }).then(async (r) => ((await r.json()) as any).sha1);
  const adminDocument = await fetch(`${first.url}api/v1/contracts/${quotaExceeded.contractID}/document?org=${owner.org}`, {
    headers: { authorization: `token ${adminToken}` },
  });
  expect(adminDocument.status).toBe(200);
  const documentUrl = (await adminDocument.json()) as string;
  const ownDocument = await get(`/user/contracts/${quotaExceeded.contractID}/document?org=${owner.org}`);
  expect(ownDocument.status).toBe(200);
  expect(new URL(ownDocument.body).pathname).toBe(new URL(documentUrl).pathname);
  const download = await fetch(documentUrl);
  expect([download.status, download.headers.get('content-type')]).toEqual([200, 'application/pdf']);
  expect(
    Buffer.from(await download.arrayBuffer())
      .subarray(0, 5)
      .toString(),
  ).toBe('%PDF-');

  const before = await counts();
  expect(before.hubs).toBe(1);
  expect(before.clusters).toBe(1 + spokes.length);
  expect(await interrupt(first.child)).toBe(0);

  // Again on the same DATA_DIR and database: the same manifest, and not one row more.
  fs.rmSync(manifestPath);
  const second = await npmStart(env());
  try {
    expect(await waitForFile(manifestPath, second, 240_000)).toEqual(manifest);
    expect(second.logs()).not.toMatch(/created user|membership of .* public|manager sync token|uploaded the document/);
    expect(await counts()).toEqual(before);
    // The same sync token: the second seed found it rather than replacing it.
    const again = await fetch(`${second.url}api/v1/users/${owner.username}/tokens`, {
      method: 'POST',
      headers: { authorization: basic(owner.username, owner.password), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'e2e-again' }),
    }).then(async (r) => ((await r.json()) as any).sha1);
    const kept = await fetch(`${second.url}api/v1/orgs/${owner.org}/manager/sync-token`, {
      headers: { authorization: `token ${again}` },
    });
    expect([kept.status, ((await kept.json()) as any).accessKeyID]).toEqual([200, syncToken.body.accessKeyID]);
    expect((await fetch(`${second.url}api/v1/orgs/${owner.org}/public_members/${owner.username}`)).status).toBe(204);
  } finally {
    expect(await interrupt(second.child)).toBe(0);
  }

  // A seed that fails (here: the site admin's password is not the one given) is logged, the platform keeps
  // serving, and no manifest is written.
  fs.rmSync(manifestPath);
  const third = await npmStart({ ...env(), PLATFORM_ADMIN_PASSWORD: 'not-the-admin-password' });
  try {
    // The failure and what follows it are two lines: wait for the last one, not the first.
    await eventually(async () => /demo seed: the platform keeps running/.test(third.logs()), 60_000);
    expect(third.logs()).toMatch(/\[platform\] demo seed failed: signing in as admin .*wrong username or password/);
    expect(third.logs()).toMatch(/\[platform\] demo seed: the platform keeps running; no manifest was written/);
    expect((await fetch(`${third.url}api/v1/version`)).status).toBe(200);
    expect(fs.existsSync(manifestPath)).toBe(false);
  } finally {
    expect(await interrupt(third.child)).toBe(0);
  }
}

async function namesInstallers(
  deploymentType: string,
  marketplace: string,
  extra: Record<string, string>,
  { db, dir, manifestPath }: Fixture,
  startAgain: boolean,
): Promise<void> {
  const env = () => ({
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: db.url,
    DEMO_SEED_MANIFEST: manifestPath,
    PLATFORM_ADMIN_PASSWORD: ADMIN_PASSWORD,
    DEPLOYMENT_TYPE: deploymentType,
    MARKETPLACE_API_SECRET: 'a-demo-marketplace-secret',
    LOG_LEVEL: 'warn',
    ...extra,
  });

  const first = await npmStart(env());
  let manifest: any;
  let bound: string[];
  try {
    manifest = await waitForFile(manifestPath, first, 240_000);
    expect(Object.keys(manifest).sort()).toEqual([
      'claims',
      'hub',
      'installers',
      'namespace',
      'outdatedClusterSet',
      'owner',
      'sharedGatewayClientOrg',
      'spokes',
      'usage',
    ]);
    expect(manifest.installers.length).toBeGreaterThanOrEqual(3);
    const token = await fetch(`${first.url}api/v1/users/admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic('admin', ADMIN_PASSWORD), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'e2e' }),
    }).then(async (r) => ((await r.json()) as any).sha1);
    const installers = async (query: string) =>
      (await fetch(`${first.url}api/v1/marketplaces/installers?marketplace=${marketplace}${query}`, {
        headers: { authorization: `token ${token}` },
      }).then((r) => r.json())) as { id: string }[];
    expect((await installers('&unbound=true')).map((i) => i.id)).toEqual(expect.arrayContaining(manifest.installers));
    bound = (await installers('')).map((i) => i.id).filter((id) => !manifest.installers.includes(id));
    expect(bound).toHaveLength(2);
    const claimable = (id: string) => fetch(`${first.url}marketplace/api/v1/marketplaces/standalone-organizations/${id}/claimable`);
    const open = await claimable(manifest.claims.claimable);
    expect([open.status, await open.json()]).toEqual([200, { isClaimable: true, claimID: manifest.claims.claimable }]);
    expect((await claimable(manifest.claims.claimed)).status).toBe(409);
  } finally {
    expect(await interrupt(first.child)).toBe(0);
  }
  if (!startAgain) return;

  fs.rmSync(manifestPath);
  const second = await npmStart(env());
  try {
    expect(await waitForFile(manifestPath, second, 240_000)).toEqual(manifest);
    const token = await fetch(`${second.url}api/v1/users/admin/tokens`, {
      method: 'POST',
      headers: { authorization: basic('admin', ADMIN_PASSWORD), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'e2e-again' }),
    }).then(async (r) => ((await r.json()) as any).sha1);
    const all = (await fetch(`${second.url}api/v1/marketplaces/installers?marketplace=${marketplace}`, {
      headers: { authorization: `token ${token}` },
    }).then((r) => r.json())) as { id: string }[];
    expect(all.map((i) => i.id).sort()).toEqual([...manifest.installers, ...bound!].sort());
  } finally {
    expect(await interrupt(second.child)).toBe(0);
  }
}
