import type { Knex } from 'knex';
import type { Database, Outbox } from '@platform/db';
import { InputError, NotFoundError } from '@platform/errors';
import type { featureSetsV1 } from '@platform/proto';
import { ClusterSets } from '../cluster-sets/cluster-sets';
import type { ClusterSetRow } from '../cluster-sets/cluster-sets-store';
import type { ClusterRow } from '../inventory/clusters-store';
import {
  AGENT_FEATURE,
  blockedRemovals,
  FEATURE_SETS,
  FEATURES,
  featureSetNamed,
  LATEST_RELEASE,
  withRequirements,
} from '../catalog/catalog';
import { DESIRED_STATE_EFFECT, type DesiredStateChange } from '../desired-state/desired-state';

const MAX_VALUES_BYTES = 64 * 1024;

/** A member of a set with the versions it reports, feature → version. */
interface Reported {
  name: string;
  features: Map<string, string>;
}

/**
 * Feature sets installed on cluster sets (docs/cluster-sets.md). Changes commit with the outbox
 * effect that sends the hub's desired state to its agent; sync status compares the desired state with what the
 * agent last reported for each member (the inventory's `cluster_features`).
 */
export class FeatureSets {
  private readonly sets: ClusterSets;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
  ) {
    this.sets = new ClusterSets(db, outbox);
  }

  async list(hubUid: string, setName: string): Promise<featureSetsV1.FeatureSetInfo[]> {
    const { set } = await this.find(hubUid, setName);
    const installed = await this.installed(set.id);
    return FEATURE_SETS.map((fs) => ({
      name: fs.name,
      title: fs.title,
      description: fs.description,
      recommended: fs.recommended,
      installed: fs.features.some((f) => installed.has(f.name)),
      requiredFeatures: fs.requiredFeatures,
      features: fs.features.map((f) => ({ ...f, installed: installed.has(f.name) })),
    }));
  }

  /** Installs the named (or recommended) features of a feature set, its required features and everything they require. */
  async install(req: featureSetsV1.InstallRequest): Promise<{ message: string; installed: string[] }> {
    const catalog = featureSetNamed(req.featureSet);
    if (!catalog) throw unknownFeatureSet(req.featureSet);
    const own = new Set(catalog.features.map((f) => f.name));
    const strangers = req.features.filter((f) => !own.has(f));
    if (strangers.length) {
      throw new InputError(`not features of feature set ${catalog.name}: ${strangers.join(', ')}`, [
        { field: 'features', description: 'unknown feature' },
      ]);
    }
    const values = parseValues(req.valuesJson);
    const asked = req.features.length ? req.features : catalog.features.filter((f) => f.recommended).map((f) => f.name);
    const wanted = withRequirements([...asked, ...catalog.requiredFeatures]);
    return this.change(req.hubUid, req.clusterSet, async (set, trx) => {
      await this.db
        .table('cluster_set_features', trx)
        .insert([...wanted].map((feature) => ({ set_id: set.id, feature, feature_set: FEATURES.get(feature)!.featureSet })))
        .onConflict(['set_id', 'feature'])
        .ignore();
      await this.db
        .table('cluster_set_values', trx)
        .insert({ set_id: set.id, feature_set: catalog.name, values: JSON.stringify(values) })
        .onConflict(['set_id', 'feature_set'])
        .merge();
      const installed = [...(await this.installed(set.id, trx))].sort();
      return { message: `feature set ${catalog.name} installed on cluster set ${set.name}`, installed };
    });
  }

  /** Uninstalls a feature set or some of its features; 400 when a feature left installed requires one of them. */
  async disable(req: featureSetsV1.DisableRequest): Promise<{ message: string; installed: string[] }> {
    const catalog = featureSetNamed(req.featureSet);
    if (!catalog) throw unknownFeatureSet(req.featureSet);
    const own = new Set(catalog.features.map((f) => f.name));
    const strangers = req.features.filter((f) => !own.has(f));
    if (strangers.length) {
      throw new InputError(`not features of feature set ${catalog.name}: ${strangers.join(', ')}`, [
        { field: 'features', description: 'unknown feature' },
      ]);
    }
    return this.change(req.hubUid, req.clusterSet, async (set, trx) => {
      const installed = await this.installed(set.id, trx);
      const removed = new Set((req.features.length ? req.features : [...own]).filter((f) => installed.has(f)));
      if (!removed.size) throw new InputError(`feature set ${catalog.name} is not installed on cluster set ${set.name}`);
      const blocked = blockedRemovals(installed, removed);
      if (blocked.length) throw new InputError(`cannot disable: ${blocked.join('; ')}`, [{ field: 'features', description: 'required' }]);
      await this.db
        .table('cluster_set_features', trx)
        .where({ set_id: set.id })
        .whereIn('feature', [...removed])
        .delete();
      const left = [...installed].filter((f) => !removed.has(f));
      if (!left.some((f) => own.has(f))) {
        await this.db.table('cluster_set_values', trx).where({ set_id: set.id, feature_set: catalog.name }).delete();
        await this.db
          .table('cluster_set_cluster_values', trx)
          .where({ feature_set: catalog.name })
          .whereIn('cluster_id', this.db.table('cluster_set_members', trx).where({ set_id: set.id }).select('cluster_id'))
          .delete();
      }
      return { message: `disabled ${[...removed].sort().join(', ')} on cluster set ${set.name}`, installed: left.sort() };
    });
  }

  /** A member cluster's own values for an installed feature set. */
  async updateCluster(req: featureSetsV1.UpdateClusterRequest): Promise<{ message: string }> {
    const catalog = featureSetNamed(req.featureSet);
    if (!catalog) throw unknownFeatureSet(req.featureSet);
    const values = parseValues(req.valuesJson);
    return this.change(req.hubUid, req.clusterSet, async (set, trx) => {
      const member = (await this.members(set.id, trx)).find((m) => m.name === req.cluster);
      if (!member) throw new NotFoundError(`managed cluster "${req.cluster.slice(0, 80)}" is not in cluster set ${set.name}`);
      const installed = await this.installed(set.id, trx);
      if (!catalog.features.some((f) => installed.has(f.name))) {
        throw new InputError(`feature set ${catalog.name} is not installed on cluster set ${set.name}`, [
          { field: 'featureSet', description: 'not installed' },
        ]);
      }
      await this.db
        .table('cluster_set_cluster_values', trx)
        .insert({ cluster_id: member.id, feature_set: catalog.name, values: JSON.stringify(values) })
        .onConflict(['cluster_id', 'feature_set'])
        .merge();
      return { message: `feature set ${catalog.name} of cluster ${member.name} updated` };
    });
  }

  /** Sync status: `all-features`, `versions`, or one `feature`. */
  async syncStatus(req: featureSetsV1.SyncStatusRequest): Promise<unknown> {
    const { set } = await this.find(req.hubUid, req.clusterSet);
    const installed = await this.installed(set.id);
    const reported = await this.reported(set.id);
    const inSync = (feature: string, desired: boolean) => (c: Reported) =>
      desired ? c.features.get(feature) === set.version : !c.features.has(feature);
    if (req.what === 'versions') {
      return {
        clusterSetVersion: set.version,
        clusters: reported.map((c) => ({ name: c.name, version: c.features.get(AGENT_FEATURE) ?? '' })),
      };
    }
    if (req.what === 'feature') {
      if (!FEATURES.has(req.feature)) throw new NotFoundError(`feature "${req.feature.slice(0, 80)}" is not in the feature catalog`);
      const ok = inSync(req.feature, installed.has(req.feature));
      return {
        insyncClusters: reported.filter(ok).map((c) => c.name),
        outOfSyncClusters: reported.filter((c) => !ok(c)).map((c) => c.name),
      };
    }
    const out: Record<string, Record<string, { insyncClusters: string[]; unalignedClusters: string[] }>> = {};
    for (const feature of [...installed].sort()) {
      const ok = inSync(feature, true);
      (out[FEATURES.get(feature)!.featureSet] ??= {})[feature] = {
        insyncClusters: reported.filter(ok).map((c) => c.name),
        unalignedClusters: reported.filter((c) => !ok(c)).map((c) => c.name),
      };
    }
    return out;
  }

  /** Possible when the set has clusters and each runs the latest release of the agent. */
  async autoUpdateCheck(hubUid: string, setName: string): Promise<featureSetsV1.AutoUpdateCheckResponse> {
    const { set } = await this.find(hubUid, setName);
    return checkOf(await this.reported(set.id));
  }

  /** Moves the set to the latest release and sends it to the agent; 400 when not possible. */
  async autoUpdate(hubUid: string, setName: string): Promise<{ message: string; clusterSetVersion: string }> {
    return this.change(hubUid, setName, async (set, trx) => {
      const check = checkOf(await this.reported(set.id, trx));
      if (!check.possible) throw new InputError(`auto-update is not possible: ${check.reason}`);
      await this.db.table('cluster_sets', trx).where({ id: set.id }).update({ version: LATEST_RELEASE });
      return { message: `cluster set ${set.name} is updating to ${LATEST_RELEASE}`, clusterSetVersion: LATEST_RELEASE };
    });
  }

  /** Runs a change of a set's desired state with the hub locked, and sends the hub's desired state after the commit. */
  private async change<T>(hubUid: string, setName: string, fn: (set: ClusterSetRow, trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.outbox.run(async (trx, stage) => {
      const hub = await this.sets.hub(hubUid, trx);
      const set = await this.sets.set(hub, setName, trx);
      const result = await fn(set, trx);
      stage(DESIRED_STATE_EFFECT, { hubId: hub.id } satisfies DesiredStateChange);
      return result;
    });
  }

  private async find(hubUid: string, setName: string): Promise<{ hub: ClusterRow; set: ClusterSetRow & { version: string } }> {
    const hub = await this.sets.hub(hubUid);
    const set = (await this.sets.set(hub, setName)) as ClusterSetRow & { version: string };
    return { hub, set };
  }

  private async installed(setId: number, trx?: Knex.Transaction): Promise<Set<string>> {
    return new Set(await this.db.table('cluster_set_features', trx).where({ set_id: setId }).pluck('feature'));
  }

  private async members(setId: number, trx?: Knex.Transaction): Promise<{ id: number; name: string }[]> {
    return this.db
      .table('clusters', trx)
      .join('cluster_set_members', 'cluster_set_members.cluster_id', 'clusters.id')
      .where('cluster_set_members.set_id', setId)
      .orderBy('clusters.name')
      .select('clusters.id', 'clusters.name');
  }

  /** The members of a set by name with the feature versions each last reported. */
  private async reported(setId: number, trx?: Knex.Transaction): Promise<Reported[]> {
    const rows: { name: string; feature: string | null; version: string | null }[] = await this.db
      .table('clusters', trx)
      .join('cluster_set_members', 'cluster_set_members.cluster_id', 'clusters.id')
      .leftJoin('cluster_features', 'cluster_features.cluster_id', 'clusters.id')
      .where('cluster_set_members.set_id', setId)
      .orderBy(['clusters.name', 'cluster_features.feature'])
      .select('clusters.name', 'cluster_features.feature', 'cluster_features.version');
    const out = new Map<string, Reported>();
    for (const r of rows) {
      let c = out.get(r.name);
      if (!c) out.set(r.name, (c = { name: r.name, features: new Map() }));
      if (r.feature) c.features.set(r.feature, r.version ?? '');
    }
    return [...out.values()];
  }
}

function checkOf(members: Reported[]): featureSetsV1.AutoUpdateCheckResponse {
  if (!members.length) return { possible: false, reason: 'the cluster set has no clusters' };
  const behind = members.filter((m) => m.features.get(AGENT_FEATURE) !== LATEST_RELEASE);
  if (behind.length) {
    const which = behind.map((m) => `${m.name} (${m.features.get(AGENT_FEATURE) || 'no agent reported'})`).join(', ');
    return { possible: false, reason: `clusters not on the latest release ${LATEST_RELEASE}: ${which}` };
  }
  return { possible: true, reason: '' };
}

const unknownFeatureSet = (name: string) =>
  new InputError(`unknown feature set "${name.slice(0, 80)}"; known: ${FEATURE_SETS.map((s) => s.name).join(', ')}`, [
    { field: 'featureSet', description: 'not in the feature catalog' },
  ]);

/** A values object as JSON text ("" for {}); at most 64 KiB. */
function parseValues(json: string): Record<string, unknown> {
  if (!json) return {};
  if (json.length > MAX_VALUES_BYTES) throw new InputError(`values must be at most ${MAX_VALUES_BYTES} bytes`);
  const value: unknown = JSON.parse(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('values must be an object');
  return value as Record<string, unknown>;
}
