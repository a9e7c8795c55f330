import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { NotFoundError } from '@platform/errors';
import { ACCOUNT_TYPE } from '../identity/identity';
import type { OrgRow } from './rows';

/** What a create or an edit writes of an organization besides its name. */
export type OrgFields = Pick<OrgRow, 'full_name' | 'description' | 'website' | 'location' | 'manager_endpoint' | 'visibility'>;

/** The rows of organizations: accounts of type organization (identity.accounts). Every method takes an optional transaction. */
export class OrganizationsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): OrganizationsStore {
    return new OrganizationsStore(db);
  }

  private organizations(trx?: Knex.Transaction) {
    return this.db.table('accounts', trx).where({ type: ACCOUNT_TYPE.organization });
  }

  /** The organization with this id, or undefined; `lock` holds its row until the transaction ends. */
  async find(id: number, trx?: Knex.Transaction, lock = false): Promise<OrgRow | undefined> {
    const q = this.organizations(trx).where({ id }).first();
    return lock ? q.forUpdate() : q;
  }

  /** The organization with this id; 404 when there is none. */
  async get(id: number, trx?: Knex.Transaction): Promise<OrgRow> {
    const row = await this.find(id, trx);
    if (!row) throw new NotFoundError(`organization ${id} does not exist`);
    return row;
  }

  /** The organization with this slug (case-insensitive), or undefined. */
  async findByName(name: string): Promise<OrgRow | undefined> {
    return this.organizations().where({ lower_login: name.toLowerCase() }).first();
  }

  /** Whether any account, user or organization, has this name (case-insensitive). */
  async nameTaken(name: string): Promise<boolean> {
    return !!(await this.db.table('accounts').where({ lower_login: name.toLowerCase() }).first('id'));
  }

  async insert(login: string, fields: OrgFields, trx?: Knex.Transaction): Promise<OrgRow> {
    const [row] = await this.db
      .table('accounts', trx)
      .insert({ type: ACCOUNT_TYPE.organization, login, lower_login: login.toLowerCase(), ...fields })
      .returning('*');
    return row;
  }

  async update(id: number, changes: Partial<OrgFields>, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('accounts', trx).where({ id }).update(changes);
  }

  /** Deletes the organization; its teams, memberships and avatar row go with it (on delete cascade). */
  async delete(id: number, trx?: Knex.Transaction): Promise<void> {
    await this.db.table('accounts', trx).where({ id }).delete();
  }
}
