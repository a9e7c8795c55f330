import type { Knex } from 'knex';
import type { Database } from '@platform/db';

/** A row of identity.org_claims: a standalone organization's one-time claim. */
export interface ClaimRow {
  claim_id: string;
  org_id: number;
  claimed_by: number | null;
  claimed_at: Date | null;
  created_at: Date;
  /** Until then the claimable check answers 429; null: no backoff. */
  retry_after: Date | null;
  flagged_claimable: boolean;
}

/** The claims of standalone organizations (identity.org_claims). Every method takes an optional transaction. */
export class ClaimsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): ClaimsStore {
    return new ClaimsStore(db);
  }

  async find(claimId: string, trx?: Knex.Transaction): Promise<ClaimRow | undefined> {
    return this.db.table('org_claims', trx).where({ claim_id: claimId }).first();
  }

  /** Records a claim, checkable after `backoffSeconds`; a second claim of one organization is a unique violation. */
  async insert(claimId: string, orgId: number, backoffSeconds = 0, trx?: Knex.Transaction): Promise<Pick<ClaimRow, 'claim_id' | 'org_id'>> {
    const retryAfter = backoffSeconds > 0 ? this.db.knex.raw(`now() + make_interval(secs => ?)`, [backoffSeconds]) : null;
    const [row] = await this.db
      .table('org_claims', trx)
      .insert({ claim_id: claimId, org_id: orgId, retry_after: retryAfter })
      .returning(['claim_id', 'org_id']);
    return row;
  }

  /** The claim of an organization, if it has one. */
  async ofOrg(orgId: number): Promise<ClaimRow | undefined> {
    return this.db.table('org_claims').where({ org_id: orgId }).first();
  }

  /** The claim with the seconds its backoff still runs (0 when it has none or it has passed), by the database's clock. */
  async withBackoff(claimId: string): Promise<(ClaimRow & { backoff_left: number }) | undefined> {
    return this.db
      .table('org_claims')
      .where({ claim_id: claimId })
      .first('*', this.db.knex.raw(`greatest(0, coalesce(extract(epoch from retry_after - now()), 0))::float8 as backoff_left`));
  }

  /** Flags the claim claimable; false when there is no such claim. */
  async flag(claimId: string): Promise<boolean> {
    return (await this.db.table('org_claims').where({ claim_id: claimId }).update({ flagged_claimable: true })) > 0;
  }

  /** The id of the oldest claim nobody has claimed yet, or undefined. */
  async oldestOpen(): Promise<string | undefined> {
    const row = await this.db.table('org_claims').whereNull('claimed_by').orderBy('created_at').orderBy('claim_id').first('claim_id');
    return row?.claim_id;
  }

  /** Marks the claim claimed by the user unless it already is (a conditional update); false when it was. */
  async take(claimId: string, userId: number, trx?: Knex.Transaction): Promise<boolean> {
    const taken = await this.db
      .table('org_claims', trx)
      .where({ claim_id: claimId })
      .whereNull('claimed_by')
      .update({ claimed_by: userId, claimed_at: this.db.knex.fn.now() });
    return taken > 0;
  }

  /** Makes the claim open again. */
  async release(claimId: string, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('org_claims', trx).where({ claim_id: claimId }).update({ claimed_by: null, claimed_at: null });
  }
}
