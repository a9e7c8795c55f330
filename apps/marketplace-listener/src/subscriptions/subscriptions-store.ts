import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** The spec's subscription states. */
export type SubscriptionState = 'Pending' | 'Bounded' | 'Running' | 'Failed' | 'Deleting' | 'DeletionFailed' | 'Deleted' | 'Revoked';

/** A row of marketplace.subscriptions. */
export interface SubscriptionRow {
  marketplace: string;
  subscription_id: string;
  subscriber_id: number | null;
  requester_id: number | null;
  bounded_installer_id: string | null;
  state: SubscriptionState;
  is_revocable: boolean;
  no_of_billing_event_sent: number;
  claim_id: string | null;
  contract_ids: number[];
  billing_details: Record<string, unknown>;
  last_event_at: Date | null;
  created_at: Date;
  last_updated_at: Date;
}

/** What a notification may change of a subscription. */
export type SubscriptionChange = Partial<
  Pick<
    SubscriptionRow,
    | 'state'
    | 'bounded_installer_id'
    | 'billing_details'
    | 'last_event_at'
    | 'subscriber_id'
    | 'requester_id'
    | 'claim_id'
    | 'contract_ids'
    | 'is_revocable'
  >
>;

/** An answered notification, by what identifies a delivery. */
export interface NotificationKey {
  marketplace: string;
  subscriptionId: string;
  eventType: string;
  eventKey: string;
}

/** What a notification was answered, kept so a redelivery answers alike. */
export interface StoredAnswer {
  status: number;
  installerId?: string;
}

/** A MarketplaceAuditEvent as the audit-logs row reads it. */
export interface AuditRow {
  marketplace: string;
  subscriptionId: string;
  status: string;
  operationType: string;
  description: string;
  data: unknown;
  timestampMs: number;
}

/** One MarketplaceAuditEvent. */
export interface AuditEntry {
  marketplace: string;
  subscriptionId: string;
  status: 'Succeeded' | 'Replayed' | 'Ignored' | 'Failed';
  operationType: string;
  description: string;
  data: unknown;
}

const jsonColumns = (change: SubscriptionChange) => ({
  ...change,
  ...(change.billing_details ? { billing_details: JSON.stringify(change.billing_details) } : {}),
  ...(change.contract_ids ? { contract_ids: JSON.stringify(change.contract_ids) } : {}),
});

/** Subscriptions, answered notifications and the audit log. Every method takes an optional transaction. */
export class SubscriptionsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): SubscriptionsStore {
    return new SubscriptionsStore(db);
  }

  /** The subscription, locked for the rest of the transaction when `trx` is given. */
  async get(marketplace: string, subscriptionId: string, trx?: Knex.Transaction): Promise<SubscriptionRow | undefined> {
    const q = this.db.table('subscriptions', trx).where({ marketplace, subscription_id: subscriptionId });
    if (trx) q.forUpdate();
    return q.first();
  }

  async insert(
    marketplace: string,
    subscriptionId: string,
    change: SubscriptionChange & { state: SubscriptionState },
    trx: Knex.Transaction,
  ) {
    await this.db.table('subscriptions', trx).insert({ marketplace, subscription_id: subscriptionId, ...jsonColumns(change) });
  }

  async update(marketplace: string, subscriptionId: string, change: SubscriptionChange, trx?: Knex.Transaction): Promise<void> {
    await this.db
      .table('subscriptions', trx)
      .where({ marketplace, subscription_id: subscriptionId })
      .update({ ...jsonColumns(change), last_updated_at: this.db.knex.fn.now() });
  }

  /** Puts a subscription back as it was before a change (its timestamps included). */
  async restore(row: SubscriptionRow, trx: Knex.Transaction): Promise<void> {
    const { marketplace, subscription_id, created_at: _created, ...rest } = row;
    await this.db
      .table('subscriptions', trx)
      .where({ marketplace, subscription_id })
      .update({ ...rest, billing_details: JSON.stringify(rest.billing_details), contract_ids: JSON.stringify(rest.contract_ids) });
  }

  async delete(marketplace: string, subscriptionId: string, trx: Knex.Transaction): Promise<void> {
    await this.db.table('subscriptions', trx).where({ marketplace, subscription_id: subscriptionId }).delete();
  }

  /** The answer a delivery was given, if it was answered before. */
  async answered(key: NotificationKey): Promise<StoredAnswer | undefined> {
    const row = await this.db.table('notifications').where(keyColumns(key)).first('answer');
    return row?.answer;
  }

  /** Records a delivery's answer; a second record of one delivery is a unique violation. */
  async recordAnswer(key: NotificationKey, answer: StoredAnswer, trx: Knex.Transaction): Promise<void> {
    await this.db.table('notifications', trx).insert({ ...keyColumns(key), answer: JSON.stringify(answer) });
  }

  async forgetAnswer(key: NotificationKey, trx: Knex.Transaction): Promise<void> {
    await this.db.table('notifications', trx).where(keyColumns(key)).delete();
  }

  /** Every subscription (of one marketplace when named), most recently updated first. */
  async list(marketplace?: string): Promise<SubscriptionRow[]> {
    const q = this.db
      .table('subscriptions')
      .orderBy([{ column: 'last_updated_at', order: 'desc' }, { column: 'marketplace' }, { column: 'subscription_id' }]);
    if (marketplace) q.where({ marketplace });
    return q.select();
  }

  /** Adds metered-billing events sent, in the database so concurrent reports do not lose counts; the new total. */
  async countBillingEvents(marketplace: string, subscriptionId: string, sent: number): Promise<number> {
    const [row] = await this.db
      .table('subscriptions')
      .where({ marketplace, subscription_id: subscriptionId })
      .update({
        no_of_billing_event_sent: this.db.knex.raw('no_of_billing_event_sent + ?', [sent]),
        last_updated_at: this.db.knex.fn.now(),
      })
      .returning('no_of_billing_event_sent');
    return Number(row?.no_of_billing_event_sent ?? 0);
  }

  /** The subscription's audit log grouped by audit period (UTC month), newest period first, oldest entry first within. */
  async auditReports(marketplace: string, subscriptionId: string): Promise<{ period: string; events: AuditRow[] }[]> {
    const rows: { period: string; events: AuditRow[] | string }[] = await this.db
      .table('audit_events')
      .where({ marketplace, subscription_id: subscriptionId })
      .groupByRaw('1')
      .orderBy('period', 'desc')
      .select(
        this.db.knex.raw(`to_char("timestamp" at time zone 'UTC', 'YYYY-MM') as period`),
        this.db.knex.raw(
          `json_agg(json_build_object('marketplace', marketplace, 'subscriptionId', subscription_id, 'status', status,
             'operationType', operation_type, 'description', description, 'data', data,
             'timestampMs', (extract(epoch from "timestamp") * 1000)::bigint) order by "timestamp", id) as events`,
        ),
      );
    return rows.map((r) => ({ period: r.period, events: typeof r.events === 'string' ? JSON.parse(r.events) : r.events }));
  }

  async audit(entry: AuditEntry): Promise<void> {
    await this.db.table('audit_events').insert({
      marketplace: entry.marketplace,
      subscription_id: entry.subscriptionId,
      status: entry.status,
      operation_type: entry.operationType.slice(0, 64),
      description: entry.description.slice(0, 2000),
      data: JSON.stringify(entry.data ?? {}),
    });
  }
}

const keyColumns = (k: NotificationKey) => ({
  marketplace: k.marketplace,
  subscription_id: k.subscriptionId,
  event_type: k.eventType.slice(0, 64),
  event_key: k.eventKey.slice(0, 128),
});
