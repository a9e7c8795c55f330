import type { Knex } from 'knex';
import { newUserKeys } from '@platform/agent-protocol';
import { ConflictError, InputError, NotFoundError, ValidationError } from '@platform/errors';
import { isUniqueViolation, type Database, unixSeconds } from '@platform/db';
import type { orgTokensV1 } from '@platform/proto';
import { changed } from '../changes';
import { ACCOUNT_TYPE } from '../identity/identity';
import { generateToken, hashToken } from '../identity/tokens';
import type { SecretBox } from '@platform/service-kit';

const RECENT_ACTIVITY_SECONDS = 7 * 24 * 3600;
const DEFAULT_SYNC_TOKEN_NAME = 'manager-sync-token';

interface OrgRow {
  id: number;
  login: string;
  manager_endpoint: string | null;
}

/**
 * An organization's machine credentials. They belong to the organization's system admin: a user account
 * (`~sysadmin-<orgId>`, a login no user can take; no password) made the first time a credential is issued; its access tokens and bus
 * accounts are what `/tokens/access-tokens` and `/tokens/bus-tokens` list.
 */
export class OrgTokens {
  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox,
    /** The installation's namespace on NATS, handed with every account issued (none on the in-process bus). */
    private readonly busNamespace = '',
  ) {}

  private async org(orgId: number): Promise<OrgRow> {
    const row = await this.db
      .table('accounts')
      .where({ id: orgId, type: ACCOUNT_TYPE.organization })
      .first('id', 'login', 'manager_endpoint');
    if (!row) throw new NotFoundError(`organization ${orgId} does not exist`);
    return row;
  }

  /** The system admin's user id, or undefined when the organization has none yet. */
  private async systemAdmin(orgId: number, trx?: Knex.Transaction): Promise<number | undefined> {
    return (await this.db.table('org_system_admins', trx).where({ org_id: orgId }).first('uid'))?.uid;
  }

  private async requireSystemAdmin(orgId: number): Promise<number> {
    await this.org(orgId);
    const uid = await this.systemAdmin(orgId);
    if (!uid) throw new InputError('the organization has no system admin yet');
    return uid;
  }

  /** The system admin, created on first use. */
  private async ensureSystemAdmin(orgId: number, trx: Knex.Transaction): Promise<number> {
    const existing = await this.systemAdmin(orgId, trx);
    if (existing) return existing;
    // `~` is outside the login rule, so no user or organization can take this name first.
    const login = `~sysadmin-${orgId}`;
    const [row] = await this.db
      .table('accounts', trx)
      .insert({
        type: ACCOUNT_TYPE.user,
        login,
        lower_login: login,
        full_name: 'Organization system admin',
        email: `sysadmin-${orgId}@system.local`,
        lower_email: `sysadmin-${orgId}@system.local`,
      })
      .returning('id');
    changed.accounts([row.id]);
    await this.db.table('org_system_admins', trx).insert({ org_id: orgId, uid: row.id });
    return row.id;
  }

  /**
   * Inside the transaction that deletes an organization: its system admin account goes with it, or the
   * account's tokens (the sync token among them) and bus accounts would keep working. Deleting the account
   * removes those too.
   */
  async onOrgDelete(trx: Knex.Transaction, orgId: number): Promise<void> {
    const uid = await this.systemAdmin(orgId, trx);
    if (!uid) return;
    changed.accounts([uid]);
    await this.db.table('accounts', trx).where({ id: uid, type: ACCOUNT_TYPE.user }).delete();
  }

  async getSyncToken(orgId: number): Promise<orgTokensV1.ManagerApiToken> {
    const org = await this.org(orgId);
    const syncToken = (trx?: Knex.Transaction) => {
      const q = this.db.table('manager_sync_tokens as m', trx).join('access_tokens as t', 't.id', 'm.token_id').where('m.org_id', orgId);
      return (trx ? q.forUpdate() : q).first('m.token_id', 'm.secret_ciphertext', 't.uid');
    };
    // Most reads come after the secret was shown: they need no lock (a secret, once gone, does not come back).
    const seen = await syncToken();
    if (!seen) throw new NotFoundError('the organization has no manager sync token');
    if (!seen.secret_ciphertext) {
      return { userId: seen.uid, orgId, orgName: org.login, accessKeyId: String(seen.token_id), secretAccessKey: '' };
    }
    return this.db.transaction(async (trx) => {
      const row = await syncToken(trx);
      if (!row) throw new NotFoundError('the organization has no manager sync token');
      let secret = '';
      if (row.secret_ciphertext) {
        secret = this.secrets.open(row.secret_ciphertext);
        // Shown once: the ciphertext goes with the first read.
        await this.db.table('manager_sync_tokens', trx).where({ org_id: orgId }).update({ secret_ciphertext: null });
      }
      return { userId: row.uid, orgId, orgName: org.login, accessKeyId: String(row.token_id), secretAccessKey: secret };
    });
  }

  /** Creates or replaces the sync token: an access token of the system admin, its secret kept sealed until read. */
  async createSyncToken(req: orgTokensV1.CreateSyncTokenRequest): Promise<void> {
    const org = await this.org(req.orgId);
    if (!org.manager_endpoint) throw new InputError('the organization is not of multi-cluster-manager origin');
    const name = req.name.trim() || DEFAULT_SYNC_TOKEN_NAME;
    if (name.length > 255)
      throw new ValidationError('name: at most 255 characters', [{ field: 'name', description: 'at most 255 characters' }]);
    if (req.sha1 && !/^[0-9a-f]{40}$/.test(req.sha1)) {
      throw new ValidationError('sha1: must be 40 lower-case hex characters', [
        { field: 'sha1', description: 'must be 40 lower-case hex characters' },
      ]);
    }
    const token = req.sha1 || generateToken();
    try {
      await this.db.transaction(async (trx) => {
        const uid = await this.ensureSystemAdmin(req.orgId, trx);
        changed.accounts([uid]);
        const previous = await this.db.table('manager_sync_tokens', trx).where({ org_id: req.orgId }).first('token_id');
        if (previous) await this.db.table('access_tokens', trx).where({ id: previous.token_id }).delete();
        const [row] = await this.db
          .table('access_tokens', trx)
          .insert({ uid, name, token_hash: hashToken(token), token_last_eight: token.slice(-8) })
          .returning('id');
        await this.db
          .table('manager_sync_tokens', trx)
          .insert({ org_id: req.orgId, token_id: row.id, secret_ciphertext: this.secrets.seal(token) });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`an access token named "${name}" or with this value already exists`);
      throw err;
    }
  }

  async deleteSyncToken(orgId: number): Promise<void> {
    await this.org(orgId);
    const row = await this.db
      .table('manager_sync_tokens as m')
      .join('access_tokens as t', 't.id', 'm.token_id')
      .where('m.org_id', orgId)
      .first('m.token_id', 't.uid');
    if (!row) return;
    changed.accounts([row.uid]);
    await this.db.table('access_tokens').where({ id: row.token_id }).delete();
  }

  async listSystemAdminTokens(orgId: number): Promise<orgTokensV1.AccessTokenInfo[]> {
    const uid = await this.requireSystemAdmin(orgId);
    const rows = await this.db.table('access_tokens').where({ uid }).orderBy('id');
    const now = Date.now() / 1000;
    return rows.map((r: { id: number; name: string; token_last_eight: string; created_at: Date; last_used_at: Date | null }) => ({
      id: r.id,
      uid,
      name: r.name,
      tokenLastEight: r.token_last_eight,
      createdAt: unixSeconds(r.created_at),
      updatedAt: unixSeconds(r.last_used_at ?? r.created_at),
      hasRecentActivity: !!r.last_used_at && now - unixSeconds(r.last_used_at) < RECENT_ACTIVITY_SECONDS,
      hasUsed: !!r.last_used_at,
      expDate: 0,
    }));
  }

  async deleteSystemAdminToken(orgId: number, id: number): Promise<void> {
    const uid = await this.requireSystemAdmin(orgId);
    changed.accounts([uid]);
    const n = await this.db.table('access_tokens').where({ uid, id }).delete();
    if (n === 0) throw new NotFoundError(`access token ${id} does not exist`);
  }

  async listBusAccounts(orgId: number): Promise<orgTokensV1.BusAccount[]> {
    const uid = await this.requireSystemAdmin(orgId);
    const rows = await this.db.table('bus_accounts').where({ uid, account_type: 'user' }).orderBy('id');
    return rows.map(toBusAccount);
  }

  async revokeBusAccount(orgId: number, id: number): Promise<void> {
    const uid = await this.requireSystemAdmin(orgId);
    const n = await this.db.table('bus_accounts').where({ uid, id }).update({ revoked: true, revoked_at: this.db.knex.fn.now() });
    if (n === 0) throw new InputError(`bus user ${id} not found`);
  }

  /** Issues a NATS user key pair for the system admin; only the public key is stored, the seed is returned once. */
  async createBusAccount(req: orgTokensV1.CreateBusAccountRequest): Promise<orgTokensV1.CreatedBusAccount> {
    await this.org(req.orgId);
    const { seed, publicKey } = newUserKeys();
    const row = await this.db.transaction(async (trx) => {
      const uid = await this.ensureSystemAdmin(req.orgId, trx);
      const [inserted] = await this.db
        .table('bus_accounts', trx)
        .insert({ uid, bus_pub_key: publicKey, cluster_id: req.clusterId, product_name: req.productName })
        .returning('*');
      return inserted;
    });
    return { account: toBusAccount(row), seed, busNamespace: this.busNamespace };
  }

  /**
   * The bus account holding a NATS user public key, revoked or not, and the organization whose system admin
   * holds it (0 when none does). Agent-protocol ingestion verifies senders with it (docs/agent-protocol.md).
   */
  async getBusAccountByKey(busPubKey: string): Promise<orgTokensV1.BusAccountOwner> {
    const row = await this.db
      .table('bus_accounts as b')
      .leftJoin('org_system_admins as s', 's.uid', 'b.uid')
      .where('b.bus_pub_key', busPubKey)
      .first('b.*', 's.org_id as org_id');
    if (!row) throw new NotFoundError('no bus account holds this public key');
    return { account: toBusAccount(row), orgId: row.org_id === null ? 0 : Number(row.org_id) };
  }
}

function toBusAccount(r: {
  id: number;
  uid: number;
  account_type: string;
  bus_pub_key: string;
  cluster_id: string;
  product_name: string;
  revoked: boolean;
}) {
  return {
    id: r.id,
    uid: r.uid,
    accountType: r.account_type,
    busPubKey: r.bus_pub_key,
    clusterId: r.cluster_id,
    productName: r.product_name,
    revoked: r.revoked,
  };
}
