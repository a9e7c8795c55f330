import type { Bus } from '@platform/bus';
import type { Database, EffectHandler } from '@platform/db';
import { publishDesiredState } from '@platform/agent-protocol';
import type { agentV1 } from '@platform/proto';
import { MANAGED_FEATURES } from '../catalog/catalog';

/** The namespace a client organization gets on each spoke imported for it: `client-<slug>`, cut to a DNS label. */
export const clientNamespace = (clientOrg: string) =>
  `client-${clientOrg.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63).replace(/-+$/, '');

/** The outbox effect that sends a hub's desired state to its agent after a change of its sets commits. */
export const DESIRED_STATE_EFFECT = 'agent.desired-state';

export interface DesiredStateChange {
  hubId: number;
}

interface DesiredRow {
  cluster_set: string;
  version: string;
  uid: string;
  name: string;
  feature: string;
  feature_set: string;
  set_values: Record<string, unknown> | null;
  cluster_values: Record<string, unknown> | null;
}

/**
 * The desired state of a hub, computed from the rows whenever it is sent: the effect reconciles the agent with the
 * rows as they are then, so it is its own inverse, and a late or repeated send carries the latest state under a
 * higher generation (the agent ignores lower ones).
 */
export class DesiredStates {
  constructor(
    private readonly db: Database,
    private readonly bus: Bus,
  ) {}

  /**
   * Every feature each member of the hub's sets is to run, with the set's release and values (cluster values over
   * the set's), every spoke imported for a client organization, and the users to connect (team auto-connect).
   */
  async of(hubId: number): Promise<Omit<agentV1.DesiredState, 'generation' | 'issuedAtMs' | 'hubUid'>> {
    const rows: DesiredRow[] = await this.db
      .table('cluster_sets')
      .join('cluster_set_members', 'cluster_set_members.set_id', 'cluster_sets.id')
      .join('clusters', 'clusters.id', 'cluster_set_members.cluster_id')
      .join('cluster_set_features', 'cluster_set_features.set_id', 'cluster_sets.id')
      .leftJoin('cluster_set_values', (j) =>
        j.on('cluster_set_values.set_id', 'cluster_sets.id').andOn('cluster_set_values.feature_set', 'cluster_set_features.feature_set'),
      )
      .leftJoin('cluster_set_cluster_values', (j) =>
        j
          .on('cluster_set_cluster_values.cluster_id', 'clusters.id')
          .andOn('cluster_set_cluster_values.feature_set', 'cluster_set_features.feature_set'),
      )
      .where('cluster_sets.hub_id', hubId)
      .orderBy(['clusters.name', 'cluster_set_features.feature'])
      .select(
        'cluster_sets.name as cluster_set',
        'cluster_sets.version',
        'clusters.uid',
        'clusters.name',
        'cluster_set_features.feature',
        'cluster_set_features.feature_set',
        'cluster_set_values.values as set_values',
        'cluster_set_cluster_values.values as cluster_values',
      );
    const clusters = new Map<string, agentV1.DesiredCluster>();
    for (const r of rows) {
      let c = clusters.get(r.uid);
      if (!c) clusters.set(r.uid, (c = { uid: r.uid, name: r.name, clusterSet: r.cluster_set, features: [] }));
      c.features.push({
        name: r.feature,
        featureSet: r.feature_set,
        version: r.version,
        valuesJson: JSON.stringify({ ...(r.set_values ?? {}), ...(r.cluster_values ?? {}) }),
      });
    }
    const imports: { uid: string; client_org: string; settings: Record<string, unknown> }[] = await this.db
      .table('client_org_clusters')
      .join('client_orgs', 'client_orgs.org_id', 'client_org_clusters.org_id')
      .where({ 'client_orgs.hub_id': hubId, 'client_org_clusters.status': 'Active' })
      .orderBy(['client_org_clusters.name', 'client_orgs.name'])
      .select('client_org_clusters.uid', 'client_orgs.name as client_org', 'client_org_clusters.settings');
    // Team auto-connect: the users to connect to the hub and its managed clusters.
    const users: { user_id: number; login: string; role: string }[] = await this.db
      .table('hub_connected_users')
      .where({ hub_id: hubId })
      .orderBy('login')
      .select('user_id', 'login', 'role');
    return {
      clusters: [...clusters.values()],
      managedFeatures: MANAGED_FEATURES,
      connectedUsers: users.map((u) => ({ userId: Number(u.user_id), login: u.login, role: u.role })),
      clientOrgImports: imports.map((i) => ({
        clusterUid: i.uid,
        clientOrg: i.client_org,
        namespace: clientNamespace(i.client_org),
        settingsJson: JSON.stringify(i.settings ?? {}),
      })),
    };
  }

  /** Publishes the hub's current desired state under its next generation. */
  async send(hubId: number): Promise<agentV1.DesiredState | undefined> {
    const hub = await this.db.table('clusters').where({ id: hubId }).first('uid');
    if (!hub) return undefined; // the hub is gone: nothing to send to
    const state = await this.of(hubId);
    const [{ generation }] = await this.db
      .table('hub_desired_state')
      .insert({ hub_id: hubId, generation: 1, sent_at: this.db.knex.fn.now() })
      .onConflict('hub_id')
      .merge({ generation: this.db.knex.raw('hub_desired_state.generation + 1'), sent_at: this.db.knex.fn.now() })
      .returning('generation');
    const message: agentV1.DesiredState = { hubUid: hub.uid, generation: Number(generation), issuedAtMs: Date.now(), ...state };
    await publishDesiredState(this.bus, message);
    return message;
  }

  effect(): EffectHandler<DesiredStateChange> {
    return {
      apply: async ({ hubId }) => void (await this.send(hubId)),
      invert: (change) => change,
    };
  }
}
