/**
 * The feature catalog (docs/cluster-sets.md, "The feature catalog"): the feature sets a cluster set can install,
 * their features, and what each feature needs. Data, not configuration: a platform release ships its catalog and
 * its release version together, and every feature of a cluster set runs at the set's release.
 */

/** The platform release the catalog describes; new cluster sets pin it, auto-update moves older sets to it. */
export const LATEST_RELEASE = 'v2026.11.0';

/** The feature whose version a cluster reports as its own (the agent and its opscenter features). */
export const AGENT_FEATURE = 'platform-agent';

export interface CatalogFeature {
  name: string;
  title: string;
  description: string;
  recommended: boolean;
  /** The UI block the feature is shown in. */
  featureBlock: string;
  /** Features (of any feature set) that must be installed for this one to work. */
  requires: string[];
}

export interface CatalogFeatureSet {
  name: string;
  title: string;
  description: string;
  recommended: boolean;
  /** Features installed whenever the feature set is, whatever the request names. */
  requiredFeatures: string[];
  features: CatalogFeature[];
}

export const FEATURE_SETS: CatalogFeatureSet[] = [
  {
    name: 'opscenter-core',
    title: 'Platform core',
    description: 'The cluster agent that applies desired state and reports inventory, and cluster monitoring',
    recommended: true,
    requiredFeatures: [AGENT_FEATURE],
    features: [
      {
        name: AGENT_FEATURE,
        title: 'Platform agent',
        description: 'Applies the desired state the platform sends and reports what runs',
        recommended: true,
        featureBlock: 'agent',
        requires: [],
      },
      {
        name: 'monitoring-stack',
        title: 'Monitoring',
        description: 'Metrics collection and dashboards for the cluster',
        recommended: false,
        featureBlock: 'monitoring',
        requires: [AGENT_FEATURE],
      },
    ],
  },
  {
    name: 'opscenter-datastore',
    title: 'Databases',
    description: 'Managed databases and their secrets',
    recommended: true,
    requiredFeatures: ['productdb-operator'],
    features: [
      {
        name: 'productdb-operator',
        title: 'Database operator',
        description: 'Runs and upgrades managed databases',
        recommended: true,
        featureBlock: 'productdb',
        requires: [AGENT_FEATURE],
      },
      {
        name: 'productvault-operator',
        title: 'Secrets engine',
        description: 'Database credentials issued from a vault',
        recommended: false,
        featureBlock: 'productvault',
        requires: ['productdb-operator'],
      },
    ],
  },
  {
    name: 'opscenter-backup',
    title: 'Backup and recovery',
    description: 'Backups of databases and volumes',
    recommended: false,
    requiredFeatures: ['productbackup-operator'],
    features: [
      {
        name: 'productbackup-operator',
        title: 'Backup operator',
        description: 'Scheduled backups and restores',
        recommended: true,
        featureBlock: 'productbackup',
        requires: [AGENT_FEATURE],
      },
    ],
  },
  {
    name: 'opscenter-networking',
    title: 'Ingress',
    description: 'Ingress controllers for database endpoints',
    recommended: false,
    requiredFeatures: ['productingress-controller'],
    features: [
      {
        name: 'productingress-controller',
        title: 'Ingress controller',
        description: 'Exposes databases outside the cluster',
        recommended: true,
        featureBlock: 'productingress',
        requires: [AGENT_FEATURE],
      },
    ],
  },
];

/** Every feature of the catalog by name, with its feature set. */
export const FEATURES = new Map(FEATURE_SETS.flatMap((set) => set.features.map((f) => [f.name, { ...f, featureSet: set.name }] as const)));

/** Every feature name the platform manages: on a cluster of a set with feature sets, the others are left alone. */
export const MANAGED_FEATURES = [...FEATURES.keys()].sort();

export const featureSetNamed = (name: string) => FEATURE_SETS.find((s) => s.name === name);

/** The features and everything they require, transitively. */
export function withRequirements(names: Iterable<string>): Set<string> {
  const out = new Set<string>();
  const visit = (name: string) => {
    if (out.has(name)) return;
    out.add(name);
    for (const r of FEATURES.get(name)?.requires ?? []) visit(r);
  };
  for (const n of names) visit(n);
  return out;
}

/** Why removing `removed` from `installed` is refused: the installed features left that require one of them; empty when allowed. */
export function blockedRemovals(installed: Set<string>, removed: Set<string>): string[] {
  const blocked: string[] = [];
  for (const name of installed) {
    if (removed.has(name)) continue;
    for (const r of FEATURES.get(name)?.requires ?? []) if (removed.has(r)) blocked.push(`${r} is required by ${name}`);
  }
  // A feature set's required features go only with the whole feature set.
  for (const set of FEATURE_SETS) {
    const kept = set.features.some((f) => installed.has(f.name) && !removed.has(f.name));
    if (!kept) continue;
    for (const r of set.requiredFeatures)
      if (removed.has(r) && installed.has(r)) blocked.push(`${r} is required by feature set ${set.name}`);
  }
  return [...new Set(blocked)].sort();
}
