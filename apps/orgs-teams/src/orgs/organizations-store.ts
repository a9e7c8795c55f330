import type { Knex } from 'knex';
import {
  pageOf,
  pageOfList,
  pageOfQuery,
  StatementColumn,
  type Database,
  type EffectInStatement,
  type EntryInStatement,
  type PageRequest,
  type Paged,
  type WholeListLimits,
} from '@platform/db';
import { NotFoundError } from '@platform/errors';
import { changed } from '../changes';
import { ACCOUNT_TYPE } from '../identity/identity';
import type { OrgCache } from './org-cache';
import { ORG_COLUMNS, toOrganization, type OrgRow } from './rows';
import type { TeamFields } from './teams-store';
import { ownedOrgTupleRows, ownedOrgTuples, tuplesByStatement } from './tuples';
import { auditInStatement, type AuditEvent } from '../audit/audit-store';

/** Who lists organizations: 0 for an anonymous caller; site admins see every organization. */
export interface Viewer {
  id: number;
  siteAdmin: boolean;
}

/**
 * Organization lists are whole unless a page is asked for, with no maximum: the platform's services read them whole,
 * and the gateway asks for pages within its own maximum.
 */
const PAGES: WholeListLimits = { defaultLimit: 'whole list' };

/** The orgs-teams schema's name, for subqueries knex does not qualify itself. */
const inSchema = (db: Database, table: string) => `${db.schema}.${table}`;

/** What a create or an edit writes of an organization besides its name. */
export type OrgFields = Pick<OrgRow, 'full_name' | 'description' | 'website' | 'location' | 'manager_endpoint' | 'visibility' | 'email'>;

/** The columns of OrgFields, in the order a create writes them: an organization's columns but its id, name, avatar and version. */
const ORG_FIELD_COLUMNS = ORG_COLUMNS.filter((c) => !['id', 'login', 'avatar_url', 'version'].includes(c)) as (keyof OrgFields)[];

/** The rows of organizations: accounts of type organization (identity.accounts). Every method takes an optional transaction. */
export class OrganizationsStore {
  private constructor(
    private readonly db: Database,
    private readonly cache?: OrgCache,
  ) {}

  /** The store; with `cache`, reads outside a transaction go through it (writers evict, and so does the announcement). */
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
    return this.cache.byId(id, async () => q);
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
    return this.cache ? this.cache.byName(name, load) : load();
  }

  /**
   * Restricts a query over `accounts as a` to the organizations the viewer may see (visibility.ts canSee):
   * public ones to everyone, limited ones to signed-in users, private ones to their members and site admins.
   */
  private visibleTo(q: Knex.QueryBuilder, viewer: Viewer): Knex.QueryBuilder {
    if (viewer.siteAdmin) return q;
    if (!viewer.id) return q.where('a.visibility', 0);
    return q.where((w) =>
      w.whereIn('a.visibility', [0, 1]).orWhereExists((e) =>
        e
          .select('uid')
          .from(`${inSchema(this.db, 'org_users')} as v`)
          .whereRaw('v.org_id = a.id and v.uid = ?', [viewer.id]),
      ),
    );
  }

  /** One page of the organizations the viewer may see, by name. */
  async listVisible(viewer: Viewer, page: PageRequest | undefined): Promise<Paged<OrgRow>> {
    const base = this.visibleTo(this.db.table('accounts as a').where('a.type', ACCOUNT_TYPE.organization), viewer);
    return pageOfQuery(base, pageOf(page, PAGES), (q) => q.orderBy('a.lower_login').select(ORG_COLUMNS.map((c) => `a.${c}`)));
  }

  /**
   * One page of a user's organizations, by name. `all` (the user themselves, site admins) gives every one; anyone
   * else sees those the viewer may see where the membership is public or the viewer is a member too, as the
   * member lists show memberships.
   */
  async listOfUser(uid: number, viewer: Viewer, all: boolean, page: PageRequest | undefined): Promise<Paged<OrgRow>> {
    let base = this.db
      .table('accounts as a')
      .join('org_users as m', 'm.org_id', 'a.id')
      .where({ 'a.type': ACCOUNT_TYPE.organization, 'm.uid': uid });
    if (!all) {
      base = this.visibleTo(base, viewer).where((w) =>
        w.where('m.is_public', true).orWhereExists((e) =>
          e
            .select('uid')
            .from(`${inSchema(this.db, 'org_users')} as v`)
            .whereRaw('v.org_id = a.id and v.uid = ?', [viewer.id]),
        ),
      );
    }
    return pageOfQuery(base, pageOf(page, PAGES), (q) => q.orderBy('a.lower_login').select(ORG_COLUMNS.map((c) => `a.${c}`)));
  }

  /** A service account's own organization (none for a site-wide one) as a list, paged as the others. */
  async listOwn(orgId: number | null, page: PageRequest | undefined): Promise<Paged<OrgRow>> {
    // One organization at most: read as any other, through the cache, rather than by a list query.
    const orgs = orgId === null ? [] : [await this.get(orgId)];
    return pageOfList(orgs, pageOf(page, PAGES));
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
    changed.orgs([row.id]);
    return row;
  }

  /**
   * Creates an organization with its owner team and the creator in both, in one statement: none of it when the creator
   * is not a user (undefined then; the caller tells why). A taken name is the unique violation of the account's insert.
   */
  async insertOwned(
    login: string,
    fields: OrgFields,
    ownerTeam: Omit<TeamFields, 'units'>,
    creatorId: number,
    entry: EntryInStatement,
    effects: (made: { orgId: StatementColumn; ownerTeamId: StatementColumn }) => EffectInStatement[],
    tuplesInStatement = false,
    audit?: AuditEvent,
  ): Promise<{ org: OrgRow; ownerTeamId: number; row: object } | undefined> {
    const t = (table: string) => this.db.sqlName(table);
    const outbox = entry.insert('org, team', effects({ orgId: StatementColumn.of('org.id'), ownerTeamId: StatementColumn.of('team.id') }));
    const tuples = tuplesByStatement(tuplesInStatement, ownedOrgTupleRows);
    const recorded = auditInStatement(this.db, audit, 'org');
    const { rows } = await this.db.knex.raw<{ rows: (OrgRow & { owner_team_id: number })[] }>(
      `with org as (insert into ${t('accounts')} (type, login, lower_login, ${ORG_FIELD_COLUMNS.join(', ')})` +
        ` select ?, ?, ?, ${ORG_FIELD_COLUMNS.map(() => '?').join(', ')}` +
        ` where exists (select 1 from ${t('accounts')} where id = ? and type = ?) returning ${ORG_COLUMNS.join(', ')}),` +
        ` team as (insert into ${t('teams')} (org_id, name, lower_name, description, permission, type)` +
        ` select id, ?, ?, ?, ?, ? from org returning id),` +
        ` team_member as (insert into ${t('team_users')} (team_id, org_id, uid) select team.id, org.id, ? from team, org returning uid),` +
        ` org_member as (insert into ${t('org_users')} (org_id, uid, is_public) select org.id, ?, false from org returning uid),` +
        tuples.cte +
        recorded.cte +
        ` entry as (?)` +
        ` select org.*, team.id as owner_team_id, ? from org, team, entry`,
      [
        ACCOUNT_TYPE.organization,
        login,
        login.toLowerCase(),
        ...ORG_FIELD_COLUMNS.map((c) => fields[c]),
        creatorId,
        ACCOUNT_TYPE.user,
        ownerTeam.name,
        ownerTeam.name.toLowerCase(),
        ownerTeam.description,
        ownerTeam.permission,
        ownerTeam.type,
        creatorId,
        creatorId,
        ...(tuplesInStatement ? [creatorId] : []),
        ...recorded.bindings,
        outbox,
        entry.columns,
      ],
    );
    if (!rows.length) return undefined;
    const {
      owner_team_id: ownerTeamId,
      outbox_entry_id: _id,
      outbox_entry_effects: _effects,
      ...org
    } = rows[0] as OrgRow & {
      owner_team_id: number;
      outbox_entry_id: unknown;
      outbox_entry_effects: unknown;
    };
    changed.orgs([org.id]);
    tuples.announce(() => ownedOrgTuples(org.id, ownerTeamId, creatorId), org.id);
    return { org, ownerTeamId, row: rows[0] };
  }

  /** Changes an organization (its call announces it). */
  async update(id: number, changes: Partial<OrgFields>, trx?: Knex.Transaction): Promise<void> {
    this.cache?.evict(id);
    changed.orgs([id]);
    await this.db.table('accounts', trx).where({ id }).update(changes);
  }

  /**
   * Edits an organization's fields, one more on its version (under the row's lock, so versions follow the commits),
   * and records the row it left for the notice: readers replace what they keep of it by a newer row. `audit`, the
   * caller's event of the edit, is written by the same statement (nothing can undo an edit).
   */
  async edit(id: number, changes: Partial<OrgFields>, audit?: AuditEvent): Promise<OrgRow> {
    // Recorded before the statement: should its answer be lost, it may still have been written. An organization that
    // does not exist is named all the same (its notice drops nothing anywhere).
    changed.orgs([id]);
    const fields = Object.entries(changes);
    const recorded = auditInStatement(this.db, audit, 'edited');
    const { rows } = await this.db.knex.raw<{ rows: OrgRow[] }>(
      `with edited as (update ${this.db.sqlName('accounts')} set ${fields.map(() => '?? = ?').join(', ')}, version = version + 1` +
        ` where type = ? and id = ? returning ${ORG_COLUMNS.join(', ')}),` +
        recorded.cte +
        ` answer as (select * from edited) select * from answer`,
      [...fields.flat(), ACCOUNT_TYPE.organization, id, ...recorded.bindings],
    );
    const [row] = rows;
    if (!row) throw new NotFoundError(`organization ${id} does not exist`);
    // The call's announcement keeps it here as it now is (OrgCache.edited) and tells the readers.
    changed.orgRow(toOrganization(row));
    return row;
  }

  /** Deletes the organization; its teams, memberships and avatar row go with it (on delete cascade). */
  async delete(id: number, trx?: Knex.Transaction): Promise<void> {
    this.cache?.evict(id);
    changed.orgs([id]);
    await this.db.table('accounts', trx).where({ id }).delete();
  }
}
