import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** A licensed product received on a cluster at one time (a LicenseUsage report). */
export interface LicenseUsageRow {
  userId: number;
  clusterUID: string;
  licenseId: string;
  product: string;
  receivedAt: Date;
}

/** One licensed-resource event (a ResourceEvent report). */
export interface ResourceEventRow {
  userId: number;
  clusterUID: string;
  licenseId: string;
  product: string;
  group: string;
  resource: string;
  resourceId: object;
  key: string;
  version: number;
  eventAt: Date;
  partialObjectMeta: object;
}

/** The quota and usage of one resource of an object over a sample's interval, in the resource's unit. */
export interface ResourceAmounts {
  resource: string;
  request: number;
  limit: number;
  used: number;
}

/** One usage sample, already lying within one UTC month (`month` is its first day, `YYYY-MM-01`). */
export interface UsageSampleRow {
  month: string;
  product: string;
  contractId: number;
  licenseId: string;
  userId: number;
  clusterUID: string;
  clusterName: string;
  hosting: string;
  namespace: string;
  namespaceUID: string;
  group: string;
  kind: string;
  name: string;
  objectUID: string;
  version: string;
  topology: string;
  replicas: number;
  startAt: Date;
  endAt: Date;
  resources: ResourceAmounts[];
}

const MEASURED = ['cpu', 'memory', 'storage'] as const;

/**
 * The rows agent reports write in the billing schema: licensed products, resource events, usage samples and
 * the ids of the messages applied. Every write takes the caller's transaction, so a message's effect and its
 * id commit together (docs/billing-ingestion.md).
 */
export class IngestionStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): IngestionStore {
    return new IngestionStore(db);
  }

  /** Records a message id; true the first time, false when it was applied before (then skip the effect). */
  async remember(message: { messageId: string; clusterUID: string; kind: string }, trx: Knex.Transaction): Promise<boolean> {
    const rows = await this.db
      .table('agent_seen_messages', trx)
      .insert({ message_id: message.messageId, cluster_uid: message.clusterUID, kind: message.kind })
      .onConflict('message_id')
      .ignore()
      .returning('message_id');
    return rows.length > 0;
  }

  /** Drops the ids of messages applied before `before` (retention); returns how many. */
  async forgetBefore(before: Date, trx?: Knex.Transaction): Promise<number> {
    return this.db.table('agent_seen_messages', trx).where('seen_at', '<', before).delete();
  }

  /** Upserts the (user, cluster, license, product) row, widening its first and last received times to include `receivedAt`. */
  async recordLicenseUsage(row: LicenseUsageRow, trx: Knex.Transaction): Promise<void> {
    await this.db
      .table('licensed_products', trx)
      .insert({
        user_id: row.userId,
        cluster_uid: row.clusterUID,
        license_id: row.licenseId,
        product: row.product,
        first_received_at: row.receivedAt,
        last_received_at: row.receivedAt,
      })
      .onConflict(['user_id', 'cluster_uid', 'license_id', 'product'])
      .merge({
        first_received_at: this.db.knex.raw('least(licensed_products.first_received_at, excluded.first_received_at)'),
        last_received_at: this.db.knex.raw('greatest(licensed_products.last_received_at, excluded.last_received_at)'),
      });
  }

  /** Inserts an event; an event already stored under the same (cluster, key, version) is kept as it is. Returns whether it was new. */
  async insertResourceEvent(row: ResourceEventRow, trx: Knex.Transaction): Promise<boolean> {
    const inserted = await this.db
      .table('resource_events', trx)
      .insert({
        user_id: row.userId,
        cluster_uid: row.clusterUID,
        license_id: row.licenseId,
        product: row.product,
        group: row.group,
        resource: row.resource,
        resource_id: JSON.stringify(row.resourceId),
        key: row.key,
        version: row.version,
        event_at: row.eventAt,
        partial_object_meta: JSON.stringify(row.partialObjectMeta),
      })
      .onConflict(['cluster_uid', 'key', 'version'])
      .ignore()
      .returning('id');
    return inserted.length > 0;
  }

  /** Inserts samples; one already stored for the same (cluster, object, start) is kept as it is. Returns how many were new. */
  async insertUsageSamples(rows: UsageSampleRow[], trx: Knex.Transaction): Promise<number> {
    if (rows.length === 0) return 0;
    const inserted = await this.db
      .table('usage_samples', trx)
      .insert(rows.map(toSampleColumns))
      .onConflict(['cluster_uid', 'object_uid', 'start_at'])
      .ignore()
      .returning('id');
    return inserted.length;
  }
}

function toSampleColumns(row: UsageSampleRow): Record<string, unknown> {
  const columns: Record<string, unknown> = {
    month: row.month,
    product: row.product,
    contract_id: row.contractId,
    license_id: row.licenseId,
    user_id: row.userId,
    cluster_uid: row.clusterUID,
    cluster_name: row.clusterName,
    hosting: row.hosting,
    namespace: row.namespace,
    namespace_uid: row.namespaceUID,
    group: row.group,
    kind: row.kind,
    name: row.name,
    object_uid: row.objectUID,
    version: row.version,
    topology: row.topology,
    replicas: row.replicas,
    start_at: row.startAt,
    end_at: row.endAt,
    resources: JSON.stringify(row.resources),
  };
  for (const name of MEASURED) {
    const r = row.resources.find((x) => x.resource === name);
    columns[`${name}_request`] = r?.request ?? 0;
    columns[`${name}_limit`] = r?.limit ?? 0;
    columns[`${name}_used`] = r?.used ?? 0;
  }
  return columns;
}
