import type { Knex } from 'knex';
import type { Database } from '@platform/db';
import { changed } from '../changes';
import { ACCOUNT_TYPE } from '../identity/identity';
import type { KubernetesSubject } from './kubernetes-tokens';

/** A service account's row, as the feature reads it. */
export interface ServiceAccountRow {
  id: number;
  login: string;
  description: string;
  service_account_org_id: number | null;
  is_admin: boolean;
  active: boolean;
  created_at: Date;
  created_by: number | null;
}

const COLUMNS = ['id', 'login', 'description', 'service_account_org_id', 'is_admin', 'active', 'created_at', 'created_by'] as const;

/** What a service account holds besides its row. */
export interface ServiceAccountDetails {
  roleIds: Map<number, number[]>;
  subjects: Map<number, KubernetesSubject[]>;
  creators: Map<number, string>;
}

/** The fields a service account is created with. */
export interface NewServiceAccount {
  orgId: number | null;
  login: string;
  description: string;
  isAdmin: boolean;
  active: boolean;
  createdBy: number;
}

const num = (v: number | string | null) => (v === null ? null : Number(v));
const toRow = (r: ServiceAccountRow): ServiceAccountRow => ({
  ...r,
  id: Number(r.id),
  service_account_org_id: num(r.service_account_org_id),
  created_by: num(r.created_by),
});

/**
 * Service accounts' rows: accounts of type 2 (identity.accounts), their custom roles (service_account_roles) and
 * Kubernetes subjects (service_account_subjects). Every method takes an optional transaction.
 */
export class ServiceAccountsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): ServiceAccountsStore {
    return new ServiceAccountsStore(db);
  }

  private accounts(trx?: Knex.Transaction) {
    return this.db.table('accounts', trx).where({ type: ACCOUNT_TYPE.serviceAccount });
  }

  /** The service account with this id belonging to `orgId` (null: a site-wide one), or undefined; `lock` holds its row. */
  async find(id: number, orgId: number | null, trx?: Knex.Transaction, lock = false): Promise<ServiceAccountRow | undefined> {
    const q = this.accounts(trx).where({ id, service_account_org_id: orgId }).first(COLUMNS);
    const row = await (lock ? q.forUpdate() : q);
    return row && toRow(row);
  }

  /** The service accounts of an organization (null: the site-wide ones), by name. */
  async list(orgId: number | null, trx?: Knex.Transaction): Promise<ServiceAccountRow[]> {
    const rows = await this.accounts(trx).where({ service_account_org_id: orgId }).orderBy('lower_login').select(COLUMNS);
    return rows.map(toRow);
  }

  /** Their roles (ascending), Kubernetes subjects (sorted) and creators' logins. */
  async details(rows: ServiceAccountRow[], trx?: Knex.Transaction): Promise<ServiceAccountDetails> {
    const ids = rows.map((r) => r.id);
    const creatorIds = [...new Set(rows.map((r) => r.created_by).filter((id): id is number => id !== null))];
    const [roles, subjects, creators] = await Promise.all([
      ids.length
        ? this.db.table('service_account_roles', trx).whereIn('account_id', ids).orderBy('role_id').select('account_id', 'role_id')
        : [],
      ids.length
        ? this.db
            .table('service_account_subjects', trx)
            .whereIn('account_id', ids)
            .orderBy(['namespace', 'name'])
            .select('account_id', 'namespace', 'name')
        : [],
      creatorIds.length ? this.db.table('accounts', trx).whereIn('id', creatorIds).select('id', 'login') : [],
    ]);
    const details: ServiceAccountDetails = { roleIds: new Map(), subjects: new Map(), creators: new Map() };
    for (const r of roles as { account_id: number; role_id: number }[]) {
      const id = Number(r.account_id);
      details.roleIds.set(id, [...(details.roleIds.get(id) ?? []), Number(r.role_id)]);
    }
    for (const s of subjects as { account_id: number; namespace: string; name: string }[]) {
      const id = Number(s.account_id);
      details.subjects.set(id, [...(details.subjects.get(id) ?? []), { namespace: s.namespace, name: s.name }]);
    }
    for (const c of creators as { id: number; login: string }[]) details.creators.set(Number(c.id), c.login);
    return details;
  }

  /** Whether any account (user, organization or service account) has this login, case-insensitively; `except` aside. */
  async loginTaken(login: string, trx: Knex.Transaction, except?: number): Promise<boolean> {
    const q = this.db.table('accounts', trx).where({ lower_login: login.toLowerCase() });
    if (except) q.whereNot({ id: except });
    return !!(await q.first('id'));
  }

  /** The subjects among these that another account than `except` is bound to. */
  async subjectsTaken(subjects: KubernetesSubject[], trx: Knex.Transaction, except?: number): Promise<KubernetesSubject[]> {
    if (!subjects.length) return [];
    const q = this.db.table('service_account_subjects', trx).whereIn(
      ['namespace', 'name'],
      subjects.map((s) => [s.namespace, s.name]),
    );
    if (except) q.whereNot({ account_id: except });
    return q.orderBy(['namespace', 'name']).select('namespace', 'name');
  }

  async insert(account: NewServiceAccount, trx: Knex.Transaction): Promise<number> {
    const [row] = await this.db
      .table('accounts', trx)
      .insert({
        type: ACCOUNT_TYPE.serviceAccount,
        login: account.login,
        lower_login: account.login.toLowerCase(),
        description: account.description,
        service_account_org_id: account.orgId,
        is_admin: account.isAdmin,
        active: account.active,
        created_by: account.createdBy || null,
      })
      .returning('id');
    changed.accounts([row.id]);
    return Number(row.id);
  }

  async update(
    id: number,
    changes: Partial<Pick<ServiceAccountRow, 'login' | 'description' | 'is_admin' | 'active'>>,
    trx: Knex.Transaction,
  ): Promise<void> {
    const row: Record<string, unknown> = { ...changes };
    if (changes.login !== undefined) row.lower_login = changes.login.toLowerCase();
    changed.accounts([id]);
    if (Object.keys(row).length) await this.db.table('accounts', trx).where({ id }).update(row);
  }

  async setRoles(id: number, roleIds: number[], trx: Knex.Transaction): Promise<void> {
    changed.accounts([id]);
    await this.db.table('service_account_roles', trx).where({ account_id: id }).delete();
    if (roleIds.length) await this.db.table('service_account_roles', trx).insert(roleIds.map((role_id) => ({ account_id: id, role_id })));
  }

  async setSubjects(id: number, subjects: KubernetesSubject[], trx: Knex.Transaction): Promise<void> {
    changed.accounts([id]);
    await this.db.table('service_account_subjects', trx).where({ account_id: id }).delete();
    if (subjects.length) await this.db.table('service_account_subjects', trx).insert(subjects.map((s) => ({ ...s, account_id: id })));
  }

  /** Deletes accounts; their tokens, roles and subjects go with them (on delete cascade). */
  async delete(ids: number[], trx: Knex.Transaction): Promise<void> {
    changed.accounts(ids);
    if (ids.length) await this.accounts(trx).whereIn('id', ids).delete();
  }
}
