import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { NotFoundError } from '@platform/errors';
import { ACCOUNT_TYPE } from '../identity/identity';
import type { OrgCache } from './org-cache';
import type { OrgRow } from './rows';

/** The columns an organization is read with (OrgRow), not the password and login columns of the account row. */
const ORG_COLUMNS = ['id', 'login', 'full_name', 'avatar_url', 'description', 'website', 'location', 'manager_endpoint', 'visibility'];

/** What a create or an edit writes of an organization besides its name. */
export type OrgFields = Pick<OrgRow, 'full_name' | 'description' | 'website' | 'location' | 'manager_endpoint' | 'visibility'>;

/** The rows of organizations: accounts of type organization (identity.accounts). Every method takes an optional transaction. */
export class OrganizationsStore {
  private constructor(
    private readonly db: Database,
    private readonly cache?: OrgCache,
  ) {}

  /** The store; with `cache`, reads outside a transaction go through it (writers evict: OrgsContext.orgChanged). */
  static create(db: Database, cache?: OrgCache): OrganizationsStore {
    return new OrganizationsStore(db, cache);
  }

  private organizations(trx?: Knex.Transaction) {
    return this.db.table('accounts', trx).where({ type: ACCOUNT_TYPE.organization });
  }

  /** The organization with this id, or undefined; `lock` holds its row until the transaction ends. */
  async find(id: number, trx?: Knex.Transaction, lock = false): Promise<OrgRow | undefined> {
    const q = this.organizations(trx).where({ id }).first(ORG_COLUMNS);
    if (lock) return q.forUpdate();
    if (trx || !this.cache) return q;
    return this.cache.through(this.cache.get(id), async () => q);
  }

  /** The organization with this id; 404 when there is none. */
  async get(id: number, trx?: Knex.Transaction): Promise<OrgRow> {
    const row = await this.find(id, trx);
    if (!row) throw new NotFoundError(`organization ${id} does not exist`);
    return row;
  }

  /** The organization with this slug (case-insensitive), or undefined; through the cache when there is one. */
  async findByName(name: string): Promise<OrgRow | undefined> {
    const load = async () => this.organizations().where({ lower_login: name.toLowerCase() }).first(ORG_COLUMNS);
    return this.cache ? this.cache.through(this.cache.getByName(name), load) : load();
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

  /** Changes an organization; the caller reports the change once committed (OrgsContext.orgChanged). */
  async update(id: number, changes: Partial<OrgFields>, trx?: Knex.Transaction): Promise<void> {
    this.cache?.evict(id);
    await this.db.table('accounts', trx).where({ id }).update(changes);
  }

  /** Deletes the organization; its teams, memberships and avatar row go with it (on delete cascade). */
  async delete(id: number, trx?: Knex.Transaction): Promise<void> {
    this.cache?.evict(id);
    await this.db.table('accounts', trx).where({ id }).delete();
  }
}
