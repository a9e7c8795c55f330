import { InputError, NotFoundError } from '@platform/errors';
import type { Knex } from 'knex';
import type { Database, Outbox, StageEffect } from '@platform/db';
import { ACCOUNT_TYPE } from '../identity/identity';
import type { OrgRow } from './rows';

/** How organizations and teams reach the data and the rules they share. */
export interface OrgsContext {
  db: Database;
  /** Slug of the administrative organization, from which site admins cannot be removed; unset means none. */
  adminOrg?: string;
  /** Changes that need authz (or storage) follow-ups commit them here with their rows (libs/db outbox). */
  outbox: Outbox;
  /**
   * Called inside the transaction that deletes an organization, while its rows still exist: other features
   * remove what they keep for it (its system admin account) and stage what goes outside the database (its
   * stored avatar).
   */
  onOrgDelete?: (trx: Knex.Transaction, orgId: number, stage: StageEffect) => Promise<void>;
}

/** An account row as far as memberships need it. */
export interface AccountRef {
  id: number;
  type: number;
  login: string;
  is_admin: boolean;
}

/** The organization with this id; 404 when there is none. */
export async function orgById(db: Database, id: number, trx?: Knex.Transaction): Promise<OrgRow> {
  const row = await db.table('accounts', trx).where({ id, type: ACCOUNT_TYPE.organization }).first();
  if (!row) throw new NotFoundError(`organization ${id} does not exist`);
  return row;
}

/** The organization with this slug, or undefined. */
export async function orgByName(db: Database, name: string): Promise<OrgRow | undefined> {
  return db.table('accounts').where({ type: ACCOUNT_TYPE.organization, lower_login: name.toLowerCase() }).first();
}

/** The user named by id or (when the id is 0) by login; 404 when none; 400 when it is an organization. */
export async function userAccount(db: Database, ref: { id?: number; login?: string }): Promise<AccountRef> {
  const q = db.table('accounts');
  const row: AccountRef | undefined = ref.id
    ? await q.where({ id: ref.id }).first('id', 'type', 'login', 'is_admin')
    : ref.login
      ? await q.where({ lower_login: ref.login.toLowerCase() }).first('id', 'type', 'login', 'is_admin')
      : undefined;
  if (!row) throw new NotFoundError(`user ${ref.login || ref.id} does not exist`);
  if (row.type === ACCOUNT_TYPE.organization) throw new InputError(`${row.login} is an organization, not a user`);
  return row;
}

/** Whether an account is a site admin (the accounts flag mirrors the site#admin tuple). */
export async function isSiteAdmin(db: Database, uid: number, trx?: Knex.Transaction): Promise<boolean> {
  if (!uid) return false;
  return !!(await db.table('accounts', trx).where({ id: uid, type: ACCOUNT_TYPE.user, is_admin: true }).first('id'));
}

/** Whether a user is a member of an organization (in at least one of its teams). */
export async function isOrgMember(db: Database, orgId: number, uid: number, trx?: Knex.Transaction): Promise<boolean> {
  if (!uid) return false;
  return !!(await db.table('org_users', trx).where({ org_id: orgId, uid }).first('uid'));
}

/** Whether removing a site admin from this organization is refused (it is the administrative organization). */
export function protectsSiteAdmins(ctx: OrgsContext, org: OrgRow): boolean {
  return !!ctx.adminOrg && ctx.adminOrg.toLowerCase() === org.login.toLowerCase();
}
