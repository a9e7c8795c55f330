import type { Knex } from 'knex';
import { AgentMessageRefused, open, reportFilter, type AccountLookup } from '@platform/agent-protocol';
import type { Bus, ClustersChanged, Unsubscribe } from '@platform/bus';
import type { Database, Outbox } from '@platform/db';
import type { agentV1 } from '@platform/proto';
import type { Logger } from '@platform/service-kit';
import { Counter, type CounterChild } from '@platform/telemetry';
import { ClustersStore, type ClusterRow, type ReportedUser } from '../inventory/clusters-store';
import { isClusterName } from '../inventory/clusters';
import { ownerTuple, TUPLES_EFFECT, type TupleChange } from '../inventory/tuples';
import { SeenMessagesStore } from './seen-messages-store';
import { isUuid } from '@platform/proto';

/** The durable JetStream consumer (or in-process consumer) of inventory reports. */
export const INVENTORY_CONSUMER = 'clusters-inventory';

/**
 * How long applied message ids are kept. The AGENT stream has no maximum age, but an acknowledged message is
 * never redelivered to its durable consumer; what comes later is a replay (a new consumer, a resend), and an
 * inventory snapshot reconciles by its observation time: an older one is ignored whatever its id.
 */
export const SEEN_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** What became of one delivered inventory message. */
export type InventoryOutcome = 'applied' | 'duplicate' | 'stale' | 'refused';

const MAX_STATUS_BYTES = 64 * 1024;

const reports = new Counter(
  'clusters_inventory_reports_total',
  'Inventory reports delivered to clusters ingestion, by outcome (applied, duplicate, stale, refused).',
  ['outcome'],
);
const spokesRefused = new Counter(
  'clusters_inventory_spokes_refused_total',
  'Managed clusters of an applied inventory report left out, by reason (other-owner, is-a-hub, invalid, duplicate).',
  ['reason'],
);
const children = new Map<string, CounterChild>();
const count = (counter: Counter, label: string) => {
  const key = `${counter === reports ? 'r' : 's'} ${label}`;
  let child = children.get(key);
  if (!child) children.set(key, (child = counter.child(label)));
  child.inc();
};

/** A report that opened but cannot be applied as sent (a hub field out of form): refused like `open`'s refusals. */
class InventoryRefused extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

interface CleanState {
  uid: string;
  name: string;
  display_name: string;
  provider: string;
  kubernetes_version: string;
  node_count: number;
  status: Record<string, unknown>;
  namespaces: { name: string; created_at: Date }[];
  features: { feature: string; version: string }[];
  connected_users: ReportedUser[];
}

/**
 * Applies inventory reports (docs/clusters.md#ingestion): opens each message (signature, live bus account,
 * ownership), then in one transaction records its id in agent_seen_messages and applies the snapshot to the
 * hub's rows. A repeat is skipped, a refusal acknowledged and counted, a failure thrown (redelivered).
 */
export class InventoryIngestion {
  private readonly store: ClustersStore;
  private readonly seen: SeenMessagesStore;

  constructor(
    private readonly outbox: Outbox,
    private readonly accounts: AccountLookup,
    db: Database,
    private readonly log: Logger,
    /** Tells the other apps which clusters a report changed, once it has committed (see Clusters). */
    private readonly changed: (change: ClustersChanged) => Promise<void> = async () => {},
  ) {
    this.store = ClustersStore.create(db);
    this.seen = SeenMessagesStore.create(db);
  }

  /** Starts the durable consumer of `agent.v1.*.inventory` on the bus; returns how to stop it. */
  consume(bus: Bus, durable = INVENTORY_CONSUMER): Promise<Unsubscribe> {
    return bus.consume({ durable, subject: reportFilter('inventory') }, async (subject, payload) => {
      await this.handle(subject, payload);
    });
  }

  /** Drops the ids of messages applied before `before` (retention); returns how many. */
  forgetSeenBefore(before: Date): Promise<number> {
    return this.seen.forgetBefore(before);
  }

  /** Prunes seen ids older than `retentionMs` now and every `everyMs`; returns how to stop. */
  pruneSeenPeriodically(retentionMs = SEEN_RETENTION_MS, everyMs = 3600_000): () => void {
    const prune = () =>
      this.forgetSeenBefore(new Date(Date.now() - retentionMs)).then(
        (n) => n && this.log.info({ forgotten: n }, 'old agent message ids forgotten'),
        (err) => this.log.warn({ err }, 'forgetting old agent message ids failed; trying again later'),
      );
    void prune();
    const timer = setInterval(prune, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Handles one delivered message; throws only when it should be redelivered. */
  async handle(subject: string, payload: unknown): Promise<InventoryOutcome> {
    const outcome = await this.handleUncounted(subject, payload);
    count(reports, outcome);
    return outcome;
  }

  private async handleUncounted(subject: string, payload: unknown): Promise<InventoryOutcome> {
    let msg;
    try {
      msg = await open(payload, { accounts: this.accounts, subject, kinds: ['inventory'] });
    } catch (err) {
      if (!(err instanceof AgentMessageRefused)) throw err;
      this.log.warn(
        { reason: err.reason, messageId: err.messageId, clusterUID: err.clusterUID, subject, detail: err.detail },
        'agent message refused',
      );
      return 'refused';
    }
    if (msg.kind !== 'inventory') return 'refused';
    const report = msg.payload;
    const { messageId, clusterUID } = msg;
    let touched: ClustersChanged | undefined;
    try {
      const outcome = await this.outbox.run(async (trx, stage) => {
        if (!(await this.seen.remember(messageId, clusterUID, 'inventory', trx))) return 'duplicate' as const;
        const hub = await this.store.lockByUid(clusterUID, trx);
        // mayReportFor found it a moment ago; deleted since, the report is about nothing.
        if (!hub || hub.hub_id !== null) throw new InventoryRefused(`hub ${clusterUID} is not in the inventory`);
        const observedAt = new Date(report.observedAtMs);
        if (!report.observedAtMs || (hub.observed_at && new Date(hub.observed_at).getTime() >= report.observedAtMs)) {
          return 'stale' as const;
        }
        const uids = await this.apply(hub, report, observedAt, trx, (change) => stage(TUPLES_EFFECT, change));
        touched = { uids, owners: [`${hub.owner_type}:${hub.owner_id}`] };
        return 'applied' as const;
      });
      if (outcome === 'applied') {
        this.log.debug({ messageId, clusterUID, spokes: report.spokes.length }, 'inventory applied');
        await this.changed(touched!);
      }
      return outcome;
    } catch (err) {
      if (!(err instanceof InventoryRefused)) throw err;
      this.log.warn({ reason: 'invalid', messageId, clusterUID, detail: err.detail }, 'inventory report refused');
      return 'refused';
    }
  }

  /**
   * Writes the snapshot: the hub's fields, its spokes (added, changed, gone), and every cluster's namespaces and
   * features. Answers the UIDs of the clusters it wrote or removed.
   */
  private async apply(
    hub: ClusterRow,
    report: agentV1.InventoryReport,
    observedAt: Date,
    trx: Knex.Transaction,
    stageTuples: (change: TupleChange) => void,
  ): Promise<string[]> {
    const hubState = clean(report.hub!);
    if (typeof hubState === 'string') throw new InventoryRefused(`hub: ${hubState}`);
    if (report.managerEndpoint.length > 2048) throw new InventoryRefused('manager endpoint longer than 2048 characters');
    // The hub keeps the name it was enrolled under (names are unique per owner, and the owner chose it).
    await this.store.update(
      hub.id,
      {
        display_name: hubState.display_name,
        provider: hubState.provider,
        kubernetes_version: hubState.kubernetes_version,
        node_count: hubState.node_count,
        status: hubState.status,
        manager_endpoint: report.managerEndpoint,
        observed_at: observedAt,
        connected_users: hubState.connected_users,
      },
      trx,
    );
    await this.store.replaceNamespaces(hub.id, hubState.namespaces, trx);
    await this.store.replaceFeatures(hub.id, hubState.features, trx);

    // The spokes of the snapshot, in form and each once.
    const spokes: CleanState[] = [];
    const uids = new Set<string>();
    const names = new Set<string>();
    for (const s of report.spokes) {
      const state = clean(s);
      if (typeof state === 'string') {
        this.refuseSpoke('invalid', hub, s.uid, state);
        continue;
      }
      if (uids.has(state.uid) || names.has(state.name) || state.uid === hub.uid) {
        this.refuseSpoke('duplicate', hub, state.uid, 'uid or name repeated in the report');
        continue;
      }
      uids.add(state.uid);
      names.add(state.name);
      spokes.push(state);
    }
    const known = new Map((await this.store.byUids([...uids], trx)).map((r) => [r.uid, r]));
    const accepted: CleanState[] = [];
    for (const s of spokes) {
      const row = known.get(s.uid);
      if (row && row.hub_id === null) this.refuseSpoke('is-a-hub', hub, s.uid, 'the uid is a hub');
      else if (row && (row.owner_type !== hub.owner_type || Number(row.owner_id) !== Number(hub.owner_id)))
        this.refuseSpoke('other-owner', hub, s.uid, `the uid belongs to ${row.owner_type}:${row.owner_id}`);
      else accepted.push(s);
    }

    // Spokes gone from the snapshot, and spokes moving here from another hub of the same owner, leave first,
    // so names freed by them can be taken.
    const current = await this.store.spokesOf(hub.id, trx);
    const keep = new Set(accepted.map((s) => s.uid));
    const gone = current.filter((r) => !keep.has(r.uid));
    await this.store.deleteSpokes(
      hub.id,
      gone.map((r) => r.id),
      trx,
    );
    const owner = { type: hub.owner_type, id: Number(hub.owner_id) };
    const tupleChange: TupleChange = { writes: [], deletes: gone.map((r) => ownerTuple(owner.type, owner.id, r.uid)) };
    // Known spokes that change name or hub are parked under a name no report can give (`~<id>`) first, so
    // swaps and moves never meet the unique name of a hub's spokes half-way.
    for (const s of accepted) {
      const row = known.get(s.uid);
      if (row && (row.hub_id !== hub.id || row.name !== s.name)) await this.store.update(row.id, { name: `~${row.id}` }, trx);
    }

    for (const s of accepted) {
      const fields = {
        name: s.name,
        display_name: s.display_name,
        provider: s.provider,
        kubernetes_version: s.kubernetes_version,
        node_count: s.node_count,
        status: s.status,
        observed_at: observedAt,
        connected_users: s.connected_users,
      };
      const row = known.get(s.uid);
      let id: number;
      if (row) {
        id = row.id;
        await this.store.update(id, { ...fields, hub_id: hub.id }, trx);
      } else {
        id = (
          await this.store.insert(
            { ...fields, uid: s.uid, hub_id: hub.id, owner_type: owner.type, owner_id: owner.id, manager_endpoint: '' },
            trx,
          )
        ).id;
        tupleChange.writes.push(ownerTuple(owner.type, owner.id, s.uid));
      }
      await this.store.replaceNamespaces(id, s.namespaces, trx);
      await this.store.replaceFeatures(id, s.features, trx);
    }
    if (tupleChange.writes.length || tupleChange.deletes.length) stageTuples(tupleChange);
    return [hub.uid, ...gone.map((r) => r.uid), ...accepted.map((s) => s.uid)];
  }

  private refuseSpoke(reason: string, hub: ClusterRow, uid: string, detail: string): void {
    count(spokesRefused, reason);
    this.log.warn({ reason, hub: hub.uid, spoke: uid.slice(0, 80), detail }, 'managed cluster of an inventory report refused');
  }
}

/** A reported cluster with every field checked and bounded as the inventory stores it; a message when one is out of form. */
function clean(s: agentV1.ClusterState): CleanState | string {
  if (!isUuid(s.uid)) return 'uid is not a lower-case UUID';
  if (!isClusterName(s.name)) return `name ${JSON.stringify(s.name.slice(0, 80))} is not a DNS label`;
  if (s.displayName.length > 255) return 'displayName longer than 255 characters';
  if (s.provider.length > 64) return 'provider longer than 64 characters';
  if (s.kubernetesVersion.length > 64) return 'kubernetesVersion longer than 64 characters';
  if (!Number.isSafeInteger(s.nodeCount) || s.nodeCount < 0 || s.nodeCount > 2_147_483_647) return 'nodeCount out of range';
  let status: unknown = {};
  if (s.statusJson) {
    if (s.statusJson.length > MAX_STATUS_BYTES) return `status longer than ${MAX_STATUS_BYTES} bytes`;
    try {
      status = JSON.parse(s.statusJson);
    } catch {
      status = undefined;
    }
  }
  if (typeof status !== 'object' || status === null || Array.isArray(status)) return 'status is not a JSON object';
  const namespaces = new Map<string, Date>();
  for (const n of s.namespaces) {
    if (!isClusterName(n.name)) return `namespace ${JSON.stringify(n.name.slice(0, 80))} is not a DNS label`;
    namespaces.set(n.name, n.createdAtMs > 0 ? new Date(n.createdAtMs) : new Date());
  }
  const features = new Map<string, string>();
  for (const f of s.features) {
    if (!f.name || f.name.length > 255) return 'feature name empty or longer than 255 characters';
    if (f.version.length > 64) return `feature ${f.name} version longer than 64 characters`;
    features.set(f.name, f.version);
  }
  const connected = new Map<string, string>();
  for (const u of s.connectedUsers) {
    if (!u.login || u.login.length > 255) return 'connected user login empty or longer than 255 characters';
    if (!u.role || u.role.length > 64) return `connected user ${u.login} role empty or longer than 64 characters`;
    connected.set(u.login, u.role);
  }
  return {
    uid: s.uid,
    name: s.name,
    display_name: s.displayName,
    provider: s.provider,
    kubernetes_version: s.kubernetesVersion,
    node_count: s.nodeCount,
    status: status as Record<string, unknown>,
    namespaces: [...namespaces].map(([name, created_at]) => ({ name, created_at })),
    features: [...features].map(([feature, version]) => ({ feature, version })),
    connected_users: [...connected].sort(([a], [b]) => a.localeCompare(b)).map(([login, role]) => ({ login, role })),
  };
}
