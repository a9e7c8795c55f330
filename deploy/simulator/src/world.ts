import { agentV1, PRODUCT_KEYS, type ProductKey } from '@platform/proto';
import { Rng, uuidOf } from './random';

/** The products the simulated clusters run, as the platform knows them. */
export const PRODUCTS = PRODUCT_KEYS;
export type Product = ProductKey;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MIB = 2 ** 20;
const GIB = 2 ** 30;
/** How long before the end of the period each object's last (quota-neutral) change happens. */
const RECENT_CHANGE_MS = 2 * DAY;

/** What the world is made of: everything that decides a simulation's messages. */
export interface WorldOptions {
  /** Organization slug: part of every UID's hash, so two organizations simulated with one seed never share a UID. */
  org: string;
  hubs: number;
  spokes: number;
  months: number;
  seed: number;
  /** Usage sample interval, hours. */
  sampleHours: number;
  /** Platform account ids of the license holders. */
  userIds: number[];
  /** End of the simulated period, Unix ms (aligned down to the sample grid). */
  nowMs: number;
}

/** One simulated cluster: a hub or a spoke. */
export interface SimCluster {
  state: agentV1.ClusterState;
  /** `gks` for the hosted Kubernetes service, otherwise the provider. */
  hosting: string;
  objects: SimObject[];
}

export interface SimHub extends SimCluster {
  spokes: SimCluster[];
  managerEndpoint: string;
}

/** One licensed object (a database, a backup configuration, a vault, an ingress) with its quota history. */
export interface SimObject {
  product: Product;
  group: string;
  kind: string;
  resource: string;
  namespace: string;
  namespaceUid: string;
  name: string;
  uid: string;
  version: string;
  topology: agentV1.Topology;
  replicas: number;
  licenseId: string;
  userId: number;
  /** Resource-history key, the same for every version. */
  key: string;
  createdMs: number;
  /** Quota periods: from `fromMs` on, these requests and limits hold (each a new resource version; the last may change none). */
  quotas: { fromMs: number; cpu: number; memory: number; storage: number }[];
  /** Fraction of the request used on average. */
  load: number;
}

export interface World {
  options: WorldOptions;
  /** Start of the period, Unix ms (on the sample grid). */
  startMs: number;
  /** End of the period, Unix ms (on the sample grid). */
  endMs: number;
  hubs: SimHub[];
}

/** What each product runs, with versions. */
const CATALOG: Record<Product, { group: string; kinds: { kind: string; resource: string; prefix: string; versions: string[] }[] }> = {
  productdb: {
    group: 'kubedb.com',
    kinds: [
      { kind: 'Postgres', resource: 'postgreses', prefix: 'pg', versions: ['14.13', '15.8', '16.4'] },
      { kind: 'MySQL', resource: 'mysqls', prefix: 'mysql', versions: ['8.0.39', '8.4.2'] },
      { kind: 'MongoDB', resource: 'mongodbs', prefix: 'mongo', versions: ['6.0.16', '7.0.14'] },
      { kind: 'Redis', resource: 'redises', prefix: 'redis', versions: ['7.2.5', '7.4.0'] },
    ],
  },
  productbackup: {
    group: 'stash.appscode.com',
    kinds: [{ kind: 'BackupConfiguration', resource: 'backupconfigurations', prefix: 'backup', versions: ['v2026.6.19', 'v2026.9.30'] }],
  },
  productvault: {
    group: 'kubevault.com',
    kinds: [{ kind: 'VaultServer', resource: 'vaultservers', prefix: 'vault', versions: ['1.16.3', '1.17.2'] }],
  },
  productingress: {
    group: 'voyager.appscode.com',
    kinds: [{ kind: 'Ingress', resource: 'ingresses', prefix: 'ingress', versions: ['v2026.7.1', 'v2026.10.2'] }],
  },
};

const FEATURES: Record<Product, string> = {
  productdb: 'productdb-operator',
  productbackup: 'productbackup-operator',
  productvault: 'productvault-operator',
  productingress: 'productingress-controller',
};

const REGIONS: Record<string, string[]> = {
  aws: ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-southeast-1'],
  gcp: ['europe-west1', 'europe-west4', 'us-central1', 'asia-east1'],
  azure: ['westeurope', 'northeurope', 'eastus', 'southeastasia'],
  'bare-metal': ['fra1', 'ams2', 'nyc3', 'sgp1'],
  gks: ['gks-eu-1', 'gks-us-1', 'gks-ap-1'],
};
const PROVIDERS = Object.keys(REGIONS);
const ENVIRONMENTS = ['prod', 'staging', 'dev', 'qa'];
const PURPOSES = ['payments', 'search', 'analytics', 'edge', 'batch', 'web', 'data', 'ml', 'ops', 'api', 'media', 'iot'];
const K8S_VERSIONS = ['v1.29.10', 'v1.30.6', 'v1.31.2', 'v1.32.1'];
const TEAM_NAMESPACES = ['team-a', 'team-b', 'team-c', 'team-d'];
/** Namespaces every cluster has: `demo` and `billing` hold licensed objects. */
const BASE_NAMESPACES = ['default', 'kube-system', 'kube-public', 'demo', 'billing'];
const APP_NAMES = ['orders', 'users', 'catalog', 'events', 'sessions', 'ledger', 'audit', 'inventory', 'metrics', 'search'];

export const DEFAULTS = { hubs: 1, spokes: 3, months: 3, seed: 1, sampleHours: 6 } as const;

/** The end of the period: `nowMs` aligned down to the sample grid (multiples of `sampleHours` since the epoch, UTC). */
export function alignNow(nowMs: number, sampleHours: number): number {
  const step = sampleHours * HOUR;
  return Math.floor(nowMs / step) * step;
}

/** Checks the options a user gives (counts, ranges); throws an Error naming the bad one. */
export function checkWorldOptions(o: WorldOptions): void {
  const int = (name: string, v: number, min: number, max: number) => {
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${name} must be an integer from ${min} to ${max} (got ${v})`);
  };
  int('hubs', o.hubs, 1, 100);
  int('spokes', o.spokes, 0, 100);
  int('months', o.months, 1, 36);
  int('sample-hours', o.sampleHours, 1, 24 * 7);
  if (!Number.isSafeInteger(o.seed)) throw new Error(`seed must be an integer (got ${o.seed})`);
  if (o.userIds.length === 0 || o.userIds.some((u) => !Number.isSafeInteger(u) || u <= 0))
    throw new Error('user ids must be positive integers');
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(o.org)) throw new Error(`org ${JSON.stringify(o.org)} is not an organization name`);
}

/** The simulated hubs, spokes, namespaces, features and licensed objects: a pure function of the options. */
export function buildWorld(options: WorldOptions): World {
  checkWorldOptions(options);
  const { seed, org } = options;
  const endMs = alignNow(options.nowMs, options.sampleHours);
  const end = new Date(endMs);
  const startMs = alignNow(
    Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - options.months, end.getUTCDate(), end.getUTCHours()),
    options.sampleHours,
  );
  const usedHubNames = new Set<string>();
  const hubs: SimHub[] = [];
  for (let h = 0; h < options.hubs; h++) {
    const rng = new Rng(seed, 'hub', h);
    const provider = rng.pick(PROVIDERS);
    const region = rng.pick(REGIONS[provider]);
    const name = unique(usedHubNames, `${h === 0 ? 'prod' : rng.pick(ENVIRONMENTS)}-${region}`);
    const hubUid = uuidOf(seed, org, 'cluster', h);
    const hub = cluster(options, rng, { uid: hubUid, name, provider, region, path: ['hub', h], hub: true, startMs });
    const usedSpokeNames = new Set<string>();
    const spokes: SimCluster[] = [];
    for (let s = 0; s < options.spokes; s++) {
      const r = new Rng(seed, 'hub', h, 'spoke', s);
      let p = r.pick(PROVIDERS);
      let reg = r.pick(REGIONS[p]);
      // Every hub with spokes has a cluster on the hosted Kubernetes service, so the gks usage view has
      // data: the last spoke moves to gks when no other cluster of the hub drew it (after the same draws as before,
      // so the rest of the world stays as it was).
      if (s === options.spokes - 1 && provider !== 'gks' && p !== 'gks' && !spokes.some((x) => x.state.provider === 'gks')) {
        p = 'gks';
        reg = REGIONS.gks[h % REGIONS.gks.length];
      }
      const spokeName = unique(usedSpokeNames, `${PURPOSES[(s + h) % PURPOSES.length]}-${reg}`);
      spokes.push(
        cluster(options, r, {
          uid: uuidOf(seed, org, 'cluster', h, 'spoke', s),
          name: spokeName,
          provider: p,
          region: reg,
          path: ['hub', h, 'spoke', s],
          hub: false,
          startMs,
        }),
      );
    }
    hubs.push({ ...hub, spokes, managerEndpoint: `https://mcm.${name}.example.com` });
  }
  return { options, startMs, endMs, hubs };
}

function unique(used: Set<string>, name: string): string {
  let candidate = name;
  for (let i = 2; used.has(candidate); i++) candidate = `${name}-${i}`;
  used.add(candidate);
  return candidate;
}

function cluster(
  options: WorldOptions,
  rng: Rng,
  c: { uid: string; name: string; provider: string; region: string; path: (string | number)[]; hub: boolean; startMs: number },
): SimCluster {
  const { seed, org } = options;
  const createdAtMs = c.startMs - rng.int(30, 400) * DAY;
  const namespaces = [...BASE_NAMESPACES, ...rng.some(TEAM_NAMESPACES, rng.int(1, 3))].map((ns) => ({
    name: ns,
    uid: uuidOf(seed, org, ...c.path, 'namespace', ns),
    createdAtMs: createdAtMs + rng.int(0, 20) * DAY,
  }));
  // Two licensed objects per cluster: a database, and one of the other products (in turn, so a few clusters cover them all).
  const index = c.path.filter((p) => typeof p === 'number').reduce<number>((a, b) => a + (b as number) + 1, 0);
  const products: Product[] = ['productdb', PRODUCTS[1 + (index % 3)]];
  const features: agentV1.InstalledFeature[] = [
    { name: c.hub ? 'platform-hub' : 'platform-agent', version: rng.pick(['v2026.9.1', 'v2026.10.1', 'v2026.11.0']), enabled: true },
    ...products.map((p) => ({ name: FEATURES[p], version: rng.pick(['v2026.8.2', 'v2026.10.3']), enabled: true })),
  ];
  if (rng.chance(0.4)) features.push({ name: 'monitoring-stack', version: 'v2026.7.0', enabled: rng.chance(0.7) });
  const hosting = c.provider === 'gks' ? 'gks' : c.provider;
  const state: agentV1.ClusterState = {
    uid: c.uid,
    name: c.name,
    displayName: `${c.name} (${c.provider === 'bare-metal' ? 'bare metal' : c.provider.toUpperCase()} ${c.region})`,
    provider: c.provider,
    kubernetesVersion: rng.pick(K8S_VERSIONS),
    nodeCount: c.hub ? rng.int(3, 12) : rng.int(2, 30),
    statusJson: JSON.stringify({ phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }], region: c.region }),
    createdAtMs,
    namespaces,
    features: features.sort((a, b) => a.name.localeCompare(b.name)),
    // Users the platform asked to connect (team auto-connect); none until a desired state names some.
    connectedUsers: [],
  };
  const licensed = namespaces.filter((n) => n.name === 'demo' || n.name === 'billing' || n.name.startsWith('team-'));
  const objects = products.map((product, i) =>
    licensedObject(options, rng, { clusterUid: c.uid, product, i, namespaces: licensed, startMs: c.startMs }),
  );
  return { state, hosting, objects };
}

function licensedObject(
  options: WorldOptions,
  rng: Rng,
  o: { clusterUid: string; product: Product; i: number; namespaces: agentV1.Namespace[]; startMs: number },
): SimObject {
  const { seed, org } = options;
  const step = options.sampleHours * HOUR;
  const spec = rng.pick(CATALOG[o.product].kinds);
  // The first object of a cluster lives in `demo`, so the demo namespace always has billing data.
  const ns = o.i === 0 ? o.namespaces.find((n) => n.name === 'demo')! : rng.pick(o.namespaces);
  const name = `${spec.prefix}-${rng.pick(APP_NAMES)}`;
  const uid = uuidOf(seed, org, 'object', o.clusterUid, o.i);
  const span = alignNow(options.nowMs, options.sampleHours) - o.startMs;
  // Created within the first fifth of the period, on the sample grid.
  const createdMs = o.startMs + Math.floor((rng.float() * span * 0.2) / step) * step;
  const clustered = o.product === 'productdb' && rng.chance(0.5);
  const replicas = clustered ? rng.pick([3, 5]) : 1;
  const base = {
    cpu: rng.pick([250, 500, 1000, 2000]) * replicas,
    memory: rng.pick([512, 1024, 2048, 4096]) * MIB * replicas,
    storage: rng.pick([5, 10, 20, 50]) * GIB * replicas,
  };
  const quotas = [{ fromMs: createdMs, ...base }];
  // One or two quota changes (resized), each a new version of the object.
  const changes = rng.int(1, 2);
  for (let c = 1; c <= changes; c++) {
    const at = createdMs + Math.floor(((span - (createdMs - o.startMs)) * (c / (changes + 1))) / step) * step;
    const prev = quotas[quotas.length - 1];
    quotas.push({ fromMs: at, cpu: prev.cpu * 2, memory: prev.memory * 2, storage: prev.storage + rng.pick([5, 10]) * GIB * replicas });
  }
  // A last change two days before the end that leaves the quota as it is (labels, annotations): objects keep
  // changing, and the dashboard's events/ (the last 14 days at most) has something to list.
  const touched = createdMs + Math.floor((span - (createdMs - o.startMs) - RECENT_CHANGE_MS) / step) * step;
  const last = quotas[quotas.length - 1];
  if (touched > last.fromMs) quotas.push({ ...last, fromMs: touched });
  return {
    product: o.product,
    group: CATALOG[o.product].group,
    kind: spec.kind,
    resource: spec.resource,
    namespace: ns.name,
    namespaceUid: ns.uid,
    name,
    uid,
    version: rng.pick(spec.versions),
    topology: clustered ? agentV1.Topology.TOPOLOGY_CLUSTER : agentV1.Topology.TOPOLOGY_STANDALONE,
    replicas,
    licenseId: uuidOf(seed, org, 'license', o.clusterUid, o.product),
    userId: options.userIds[rng.int(0, options.userIds.length - 1)],
    key: `${CATALOG[o.product].group}/${spec.resource}/${ns.name}/${name}`,
    createdMs,
    quotas,
    load: 0.2 + rng.float() * 0.6,
  };
}

/** Every cluster of a hub: the hub first, then its spokes. */
export function clustersOf(hub: SimHub): SimCluster[] {
  return [hub, ...hub.spokes];
}
