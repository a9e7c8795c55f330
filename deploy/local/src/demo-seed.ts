import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectBus } from '@platform/bus';
import { clustersV1 } from '@platform/proto';
import { DeadlineError } from '@platform/errors';
import { createClient, loadConfig, serviceEnv } from '@platform/service-kit';
import {
  formatProgress,
  PlatformApi,
  simulate,
  writePrivateFile,
  type Simulation,
  type SimulateOptions,
  type SimulationResult,
} from '@platform/simulator';
import { seedClientOrgs, seedOutdatedClusterSet } from './demo-cluster-sets';
import { hasContracts, seedContracts, type QuotaExceeded } from './demo-contracts';
import { seedMarketplace } from './demo-marketplace';
import { seedOrgAccess } from './demo-org';
import type { LocalPlatform } from './platform';

/**
 * Demo data on start (docs/simulator.md): with DEMO_SEED_MANIFEST=<path>, once the platform is
 * ready, make a demo organization owner (as the site admin, over the public API), let the in-process simulator
 * enroll one hub with three managed clusters in organization `demo` and send three months of reports on the bus
 * the apps use (the process's in-process bus, or NATS_URL), wait until the services have applied them, and
 * write the manifest naming the data. The owner's membership of `demo` is public and the organization has a
 * manager sync token (./demo-org.ts); hosted deployments get contracts, one with a document (./demo-contracts.ts).
 * Everything it makes is kept under DATA_DIR/demo-seed (the owner's password, the sync token's secret and the
 * hub's bus credentials, 0600), so a second start on the same DATA_DIR enrolls nothing again
 * and resends the same message ids, which ingestion applies once. The simulated clusters answer resource-history
 * requests until the platform stops.
 *
 * A failure is logged (`[platform] demo seed failed: ...`) and the platform keeps serving; no manifest is written.
 */

export const DEMO = { org: 'demo', owner: 'demo-owner', hubs: 1, spokes: 3, months: 3, seed: 1 } as const;
/** Longest wait for ingestion to apply the demo's reports. */
const APPLY_DEADLINE_MS = 10 * 60_000;
/** Billing ingestion that applies nothing new for this long is taken as off: the manifest is written without `usage`. */
const BILLING_STALL_MS = 30_000;

/** The manifest's keys; `usage` is left out when its data does not exist. */
export interface DemoManifest {
  owner: { org: string; username: string; password: string };
  hub: { name: string; uid: string };
  spokes: { name: string; uid: string }[];
  namespace: string;
  usage?: SimulationResult['usage'];
  /** Hosted deployments: a contract of the demo organization whose quota the reports used up. */
  quotaExceeded?: QuotaExceeded;
  /** A cluster set of the hub whose clusters run an agent behind the latest release (docs/cluster-sets.md). */
  outdatedClusterSet?: string;
  /** A client organization whose gateway config another client organization references (docs/client-organizations.md). */
  sharedGatewayClientOrg?: number;
  /** Marketplace deployments: installers of its marketplace not yet bound. */
  installers?: string[];
  /** Marketplace deployments whose listener takes the seed's notifications: a claimable and a claimed claim. */
  claims?: { claimable: string; claimed: string };
}

export interface DemoSeed {
  /** Settles once the manifest is written, or the seed failed (logged). */
  done: Promise<void>;
  /** Stops answering resource-history requests and closes what the seed opened. */
  stop(): Promise<void>;
}

/** Starts seeding in the background when DEMO_SEED_MANIFEST is set; undefined otherwise. */
export function startDemoSeed(env: NodeJS.ProcessEnv, platform: LocalPlatform, progress: (msg: string) => void): DemoSeed | undefined {
  const manifestPath = env.DEMO_SEED_MANIFEST;
  if (!manifestPath) return undefined;
  let stopping = false;
  let sim: Simulation | undefined;
  const started = Date.now();
  const done = (async () => {
    try {
      // On NATS, opened by the simulation in the namespace the platform hands out with the hub's credentials, and closed
      // when it stops; otherwise the apps' own in-process bus.
      const natsUrl = env.NATS_URL || undefined;
      const bus: SimulateOptions['bus'] = natsUrl
        ? (namespace) => connectBus(natsUrl, 'demo-seed', { namespace })
        : await connectBus(undefined, 'demo-seed');
      const seeded = await seedDemo(
        env,
        platform,
        bus,
        (msg) => progress(`demo seed: ${msg}`),
        () => stopping,
      );
      sim = seeded.sim;
      if (stopping) return;
      writePrivateFile(path.resolve(manifestPath), `${JSON.stringify(seeded.manifest, null, 2)}\n`);
      const sent = Object.values(sim.result.published).reduce((a, b) => a + b, 0);
      progress(
        `demo seed: manifest written to ${path.resolve(manifestPath)} (organization ${DEMO.org}, owner ${DEMO.owner}; ` +
          `${sent} reports sent in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
    } catch (err) {
      if (stopping) return;
      progress(`demo seed failed: ${(err as Error).message}`);
      progress('demo seed: the platform keeps running; no manifest was written');
    }
  })();
  return {
    done,
    async stop() {
      stopping = true;
      // Closes the seed's own NATS connection; the in-process bus is the apps'.
      await sim?.stop();
    },
  };
}

/**
 * The site admin's possible passwords, in order: PLATFORM_ADMIN_PASSWORD, then the one the first start generated
 * and kept under DATA_DIR. Both, because on a DATA_DIR from an earlier start the admin keeps its first password
 * whatever PLATFORM_ADMIN_PASSWORD says now.
 */
function adminPasswords(env: NodeJS.ProcessEnv, dataDir: string): string[] {
  const file = path.join(dataDir, 'bootstrap-admin-password');
  const kept = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : undefined;
  const candidates = [env.PLATFORM_ADMIN_PASSWORD, kept].filter((p): p is string => !!p);
  if (candidates.length === 0) {
    throw new Error(`the site admin's password is needed to create the demo owner: set PLATFORM_ADMIN_PASSWORD (${file} does not exist)`);
  }
  return [...new Set(candidates)];
}

/** Signs in as the site admin with the first of `passwords` that works; the last refusal when none does. */
async function signInAsAdmin(url: string, username: string, passwords: string[]): Promise<PlatformApi> {
  for (const [i, password] of passwords.entries()) {
    try {
      return await PlatformApi.signIn({ url, username, password }, 'demo-seed');
    } catch (err) {
      if (i === passwords.length - 1) throw err;
    }
  }
  throw new Error('unreachable');
}

/** The demo owner's password, made on the first seed and kept under DATA_DIR/demo-seed (0600). */
function ownerPassword(dir: string): string {
  const file = path.join(dir, 'owner.json');
  if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { password: string }).password;
  const password = randomBytes(15).toString('base64url');
  writePrivateFile(file, `${JSON.stringify({ username: DEMO.owner, password }, null, 2)}\n`);
  return password;
}

async function seedDemo(
  env: NodeJS.ProcessEnv,
  platform: LocalPlatform,
  bus: SimulateOptions['bus'],
  say: (msg: string) => void,
  stopping: () => boolean,
): Promise<{ sim: Simulation; manifest: DemoManifest }> {
  const { DATA_DIR } = loadConfig({ DATA_DIR: serviceEnv.DATA_DIR }, env);
  const dir = path.join(DATA_DIR, 'demo-seed');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const url = platform.url;
  const password = ownerPassword(dir);

  // The organization owner, made by the site admin; already there on a later start.
  const adminName = env.PLATFORM_ADMIN_USERNAME || 'admin';
  // One sign-in for everything the seed does as the site admin: the owner now, the contracts at the end.
  const admin = await signInAsAdmin(url, adminName, adminPasswords(env, DATA_DIR));
  try {
    return await seedAs(admin);
  } finally {
    await admin.close();
  }

  async function seedAs(admin: PlatformApi): Promise<{ sim: Simulation; manifest: DemoManifest }> {
    const made = await admin.call('POST', '/admin/users', { username: DEMO.owner, email: `${DEMO.owner}@example.com`, password });
    if (made.status === 201) say(`created user ${DEMO.owner}`);
    else if (made.status !== 409 && made.status !== 422)
      throw new Error(`creating user ${DEMO.owner}: HTTP ${made.status} ${JSON.stringify(made.body)}`);

    say(
      `simulating ${DEMO.hubs} hub with ${DEMO.spokes} managed clusters and ${DEMO.months} months of reports in organization ${DEMO.org}`,
    );
    const sim = await simulate({
      api: { url, username: DEMO.owner, password },
      org: DEMO.org,
      hubs: DEMO.hubs,
      spokes: DEMO.spokes,
      months: DEMO.months,
      seed: DEMO.seed,
      bus,
      state: path.join(dir, 'state.json'),
      onProgress: (p) => say(formatProgress(p)),
      progressEveryMs: 2_000,
    });
    try {
      const { result } = sim;
      const hub = result.hubs[0];
      say(`waiting for the services to apply the reports`);
      await waitForClusters(platform, hub, stopping);
      const usage = await waitForBilling(platform, result, say, stopping);
      const owner = await PlatformApi.signIn({ url, username: DEMO.owner, password }, 'demo-seed');
      try {
        await seedOrgAccess(owner, DEMO.org, DEMO.owner, hub.uid, dir, say);
      } finally {
        await owner.close();
      }
      let quotaExceeded: QuotaExceeded | undefined;
      if (hasContracts(env.DEPLOYMENT_TYPE)) {
        say('making the demo contracts and licenses');
        quotaExceeded = await seedContracts(
          admin,
          { org: DEMO.org, username: DEMO.owner },
          { hub: hub.uid, spokes: hub.spokes.map((s) => s.uid) },
          Math.floor(result.startMs / 1000) - 86_400,
          say,
        );
      }
      const marketplace = await seedMarketplace(env, platform, admin, DEMO.owner, dir, say);
      const manifest: DemoManifest = {
        owner: { org: DEMO.org, username: DEMO.owner, password },
        hub: { name: hub.name, uid: hub.uid },
        spokes: hub.spokes,
        namespace: 'demo',
        ...(usage ? { usage } : {}),
        ...(quotaExceeded ? { quotaExceeded } : {}),
        outdatedClusterSet: await seedOutdatedClusterSet(admin, platform, DEMO.org, hub, say),
        sharedGatewayClientOrg: await seedClientOrgs(admin, DEMO.org, hub, say),
        ...(marketplace ?? {}),
      };
      return { sim, manifest };
    } catch (err) {
      await sim.stop();
      throw err;
    }
  }
}

/** Waits until clusters (its RPCs) knows the hub's spokes and the `demo` namespace. */
async function waitForClusters(platform: LocalPlatform, hub: SimulationResult['hubs'][number], stopping: () => boolean): Promise<void> {
  const app = platform.apps.get('clusters');
  if (!app) throw new Error('the clusters app is not running');
  const clusters = createClient(clustersV1.ClustersServiceService, `127.0.0.1:${app.grpcPort}`, { name: 'clusters', deadlineMs: 5_000 });
  try {
    const deadline = Date.now() + APPLY_DEADLINE_MS;
    for (;;) {
      // A busy machine can make one poll late: that is a reason to ask again, not to give up the seed.
      const applied = await Promise.all([clusters.listSpokes({ hubUid: hub.uid }), clusters.listNamespaces({ clusterUid: hub.uid })]).then(
        ([spokes, namespaces]) =>
          hub.spokes.every((s) => spokes.clusters.some((c) => c.uid === s.uid)) && namespaces.namespaces.some((n) => n.name === 'demo'),
        (err: unknown) => {
          if (err instanceof DeadlineError) return false;
          throw err;
        },
      );
      if (applied) return;
      if (stopping()) throw new Error('stopped');
      if (Date.now() > deadline)
        throw new Error(`clusters did not apply the inventory of hub ${hub.name} within ${APPLY_DEADLINE_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    clusters.close();
  }
}

/**
 * Waits until billing-dashboard has applied the license usage, resource events and usage samples (its
 * applied-message ids), then answers the manifest's `usage` if its rows exist. Billing has no read RPC for these
 * tables yet (the dashboard routes come later), so this reads its schema through the app's own database handle.
 */
async function waitForBilling(
  platform: LocalPlatform,
  result: SimulationResult,
  say: (msg: string) => void,
  stopping: () => boolean,
): Promise<SimulationResult['usage'] | undefined> {
  const db = platform.apps.get('billing-dashboard')?.ctx.db;
  if (!db) throw new Error('the billing-dashboard app is not running');
  const deadline = Date.now() + APPLY_DEADLINE_MS;
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const [{ n }] = await db.table('agent_seen_messages').whereIn('cluster_uid', result.clusterUids).count({ n: '*' });
    const applied = Number(n);
    if (applied >= result.billingReports) break;
    if (applied !== last) {
      last = applied;
      lastChange = Date.now();
    }
    if (stopping()) throw new Error('stopped');
    if (Date.now() - lastChange > BILLING_STALL_MS || Date.now() > deadline) {
      say(
        `billing-dashboard applied ${applied} of ${result.billingReports} billing reports and nothing more for ${BILLING_STALL_MS / 1000} s ` +
          '(is its agent-report ingestion on? docs/billing-ingestion.md)',
      );
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const u = result.usage;
  const month = `${u.year}-${u.month}-01`;
  const [licensed, event, sample] = await Promise.all([
    db.table('licensed_products').where({ user_id: u.uid, cluster_uid: u.cid, license_id: u.lid, product: u.product }).first(),
    db.table('resource_events').where({ cluster_uid: u.cid, key: u.eventKey, version: u.eventVersion }).first(),
    db.table('usage_samples').where({ cluster_uid: u.cid, object_uid: u.objectID, month }).first(),
  ]);
  if (licensed && event && sample) return u;
  say(
    `the manifest leaves "usage" out: billing-dashboard has no ${!licensed ? 'license usage' : !event ? 'resource event' : 'usage samples'} for it`,
  );
  return undefined;
}
