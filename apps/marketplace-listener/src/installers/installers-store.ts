import type { Knex } from 'knex';
import { pageOf, type Database, type PageLimits } from '@platform/db';
import type { StoredBinding } from './archive';

/** A row of marketplace.installers. */
export interface InstallerRow {
  id: string;
  marketplace: string;
  options: Record<string, unknown>;
  created_by: string;
  created_at: Date;
  subscription_id: string | null;
  bound_at: Date | null;
  binding: StoredBinding | null;
}

/** The newest 100 installers unless asked, at most 1000; a limit outside is refused, as it always was. */
const NEWEST: PageLimits = { defaultLimit: 100, maxLimit: 1000, outside: 'refuse' };

/** Installers and their one binding. Every method takes an optional transaction. */
export class InstallersStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): InstallersStore {
    return new InstallersStore(db);
  }

  async insert(row: Pick<InstallerRow, 'id' | 'marketplace' | 'options' | 'created_by'>): Promise<InstallerRow> {
    const [created] = await this.db
      .table('installers')
      .insert({ ...row, options: JSON.stringify(row.options) })
      .returning('*');
    return created;
  }

  async get(id: string, trx?: Knex.Transaction): Promise<InstallerRow | undefined> {
    return this.db.table('installers', trx).where({ id }).first();
  }

  /** The newest installers, the first page of the list newest first; `limit` 0 for the default. */
  async list(filter: { marketplace?: string; unboundOnly: boolean; limit: number }): Promise<InstallerRow[]> {
    const { limit } = pageOf(filter, NEWEST);
    const q = this.db.table('installers').orderBy('created_at', 'desc').orderBy('id').limit(limit);
    if (filter.marketplace) q.where({ marketplace: filter.marketplace });
    if (filter.unboundOnly) q.whereNull('subscription_id');
    return q;
  }

  /** Binds the installer unless it already is (a conditional update, so two racing bindings cannot both win). */
  async bind(id: string, subscriptionId: string, binding: StoredBinding, trx: Knex.Transaction): Promise<boolean> {
    const n = await this.db
      .table('installers', trx)
      .where({ id })
      .whereNull('subscription_id')
      .update({ subscription_id: subscriptionId, bound_at: this.db.knex.fn.now(), binding: JSON.stringify(binding) });
    return n > 0;
  }

  /** Takes a binding back (a binding whose provisioning failed). */
  async unbind(id: string, subscriptionId: string, trx: Knex.Transaction): Promise<void> {
    await this.db
      .table('installers', trx)
      .where({ id, subscription_id: subscriptionId })
      .update({ subscription_id: null, bound_at: null, binding: null });
  }
}
