import type { Knex } from 'knex';
import {
  pageOf,
  pageOfQuery,
  StatementColumn,
  type Database,
  type EffectInStatement,
  type EntryInStatement,
  type PageRequest,
  type Paged,
  type WholeListLimits,
} from '@platform/db';
import { InputError, NotFoundError } from '@platform/errors';
import { changed } from '../changes';
import { ACCOUNT_TYPE, type AccountRow } from '../identity/identity';
import type { TeamRow } from './rows';
import { teamMember, teamMemberRows, tuplesByStatement } from './tuples';
import { auditInStatement, type AuditEvent } from '../audit/audit-store';

/** Member lists are whole unless a page is asked for, with no maximum: services read every member, the gateway pages. */
const PAGES: WholeListLimits = { defaultLimit: 'whole list' };

/** A user account as memberships need it. */
export interface AccountRef {
  id: number;
  type: number;
  login: string;
  is_admin: boolean;
}

/** A team_users row: a user in a team of an organization. */
export interface TeamMembership {
  team_id: number;
  org_id: number;
  uid: number;
}

/** An org_users row: a user in an organization, publicly or not. */
export interface OrgMembership {
  org_id: number;
  uid: number;
  is_public: boolean;
}

/**
 * Who is in which organization and team (identity.org_users, identity.team_users), and the user accounts
 * those rows name. Every method takes an optional transaction.
 */
export class MembersStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): MembersStore {
    return new MembersStore(db);
  }

  /**
   * The user named by id or (when the id is 0) by login; 404 when none; 400 when it is an organization or a service
   * account (which is never a member of a team, so never a member or an owner of an organization).
   */
  async user(ref: { id?: number; login?: string }): Promise<AccountRef> {
    const row = await this.person(ref);
    if (row.type === ACCOUNT_TYPE.serviceAccount) throw notAUser(row);
    return row;
  }

  /**
   * A user or a service account (with the organization it belongs to: null for a site-wide one), in the one read
   * `user` makes; an organization is refused as `user` refuses it.
   */
  async person(ref: { id?: number; login?: string }): Promise<PersonRow> {
    const q = this.db.table('accounts');
    const row = ref.id
      ? await q.where({ id: ref.id }).first(PERSON_COLUMNS)
      : ref.login
        ? await q.where({ lower_login: ref.login.toLowerCase() }).first(PERSON_COLUMNS)
        : undefined;
    return checkPerson(row, ref);
  }

  /**
   * The team row (undefined when there is none) and the user `ref` names, as `user` answers it, read in one statement;
   * the user's refusals (404, 400) only once the team is there, as reading the team first, then the user, would.
   */
  async teamAndUser(teamId: number, ref: { id?: number; login?: string }): Promise<{ team?: TeamRow; user?: AccountRef }> {
    const t = (table: string) => this.db.sqlName(table);
    const by = ref.id ? ['a.id = ?', ref.id] : ref.login ? ['a.lower_login = ?', ref.login.toLowerCase()] : ['false', undefined];
    const { rows } = await this.db.knex.raw<{ rows: (TeamRow & PersonColumns)[] }>(
      `select t.*, ${PERSON_COLUMNS.map((c) => `a.${c} as a_${c}`).join(', ')} from (select 1) as one` +
        ` left join ${t('teams')} as t on t.id = ? left join ${t('accounts')} as a on ${by[0]}`,
      by[1] === undefined ? [teamId] : [teamId, by[1]],
    );
    const [team, person] = splitPerson(rows[0]);
    if (team.id === null) return {};
    return { team, user: userOf(person, ref) };
  }

  /** Whether an account (a user, or a site-wide service account) is a site admin (the flag mirrors the site#admin tuple). */
  async isSiteAdmin(uid: number, trx?: Knex.Transaction): Promise<boolean> {
    if (!uid) return false;
    return !!(await this.db
      .table('accounts', trx)
      .where({ id: uid, is_admin: true })
      .whereIn('type', [ACCOUNT_TYPE.user, ACCOUNT_TYPE.serviceAccount])
      .first('id'));
  }

  /**
   * Whether an account sees an organization as its members do: a user in at least one of its teams, or a service
   * account of the organization (which holds the member relation without being in a team).
   */
  async isOrgMember(orgId: number, uid: number, trx?: Knex.Transaction): Promise<boolean> {
    if (!uid) return false;
    if (await this.db.table('org_users', trx).where({ org_id: orgId, uid }).first('uid')) return true;
    return !!(await this.db
      .table('accounts', trx)
      .where({ id: uid, type: ACCOUNT_TYPE.serviceAccount, service_account_org_id: orgId })
      .first('id'));
  }

  /** One page of the organization's members (only the public ones when asked), by login. */
  async orgMembers(orgId: number, publicOnly: boolean, page?: PageRequest): Promise<Paged<AccountRow>> {
    const base = this.db.table('org_users as m').join('accounts as a', 'a.id', 'm.uid').where('m.org_id', orgId);
    if (publicOnly) base.andWhere('m.is_public', true);
    return pageOfQuery(base, pageOf(page, PAGES), (q) => q.orderBy('a.lower_login').select('a.*'));
  }

  /** The membership of the user with this login, or undefined when they are not a member. */
  async orgMembership(orgId: number, login: string): Promise<{ is_public: boolean } | undefined> {
    return this.db
      .table('org_users as m')
      .join('accounts as a', 'a.id', 'm.uid')
      .where({ 'm.org_id': orgId, 'a.lower_login': login.toLowerCase() })
      .first('m.is_public');
  }

  /** Makes a membership public or private; false when the user is not a member. */
  async setPublic(orgId: number, uid: number, isPublic: boolean): Promise<boolean> {
    changed.orgs([orgId]);
    return (await this.db.table('org_users').where({ org_id: orgId, uid }).update({ is_public: isPublic })) > 0;
  }

  /** Adds a user to an organization, privately; false when they already are a member. */
  async joinOrg(orgId: number, uid: number, trx?: Knex.Transaction): Promise<boolean> {
    changed.orgs([orgId]);
    const inserted = await this.db
      .table('org_users', trx)
      .insert({ org_id: orgId, uid, is_public: false })
      .onConflict(['org_id', 'uid'])
      .ignore()
      .returning('uid');
    return inserted.length > 0;
  }

  /** Puts organization memberships back as they were. */
  async insertOrgMemberships(rows: OrgMembership[], trx?: Knex.Transaction): Promise<void> {
    changed.orgs(rows.map((r) => r.org_id));
    if (rows.length) await this.db.table('org_users', trx).insert(rows);
  }

  /** Takes a user out of an organization; answers the membership removed, if there was one. */
  async leaveOrg(orgId: number, uid: number, trx?: Knex.Transaction): Promise<{ is_public: boolean } | undefined> {
    changed.orgs([orgId]);
    const [row] = await this.db.table('org_users', trx).where({ org_id: orgId, uid }).delete().returning('is_public');
    return row;
  }

  /** Takes those of the users who are in no team of the organization out of it; answers the memberships removed. */
  async leaveOrgUnlessInTeam(orgId: number, uids: number[], trx?: Knex.Transaction): Promise<{ uid: number; is_public: boolean }[]> {
    changed.orgs([orgId]);
    return this.db
      .table('org_users', trx)
      .where({ org_id: orgId })
      .whereIn('uid', uids)
      .whereNotExists((q) =>
        q.select('uid').from(`${this.db.schema}.team_users as t`).whereRaw('t.org_id = org_users.org_id and t.uid = org_users.uid'),
      )
      .delete()
      .returning(['uid', 'is_public']);
  }

  /** One page of the team's members, by login. */
  async teamMembers(teamId: number, page?: PageRequest): Promise<Paged<AccountRow>> {
    const base = this.db.table('team_users as m').join('accounts as a', 'a.id', 'm.uid').where('m.team_id', teamId);
    return pageOfQuery(base, pageOf(page, PAGES), (q) => q.orderBy('a.lower_login').select('a.*'));
  }

  /** The permissions of the teams of the organization the user is in. */
  async teamPermissionsOf(orgId: number, uid: number): Promise<string[]> {
    return this.db
      .table('team_users as m')
      .join('teams as t', 't.id', 'm.team_id')
      .where({ 'm.org_id': orgId, 'm.uid': uid })
      .pluck('t.permission');
  }

  /** The team's member with this login, or undefined. */
  async teamMember(teamId: number, login: string): Promise<AccountRow | undefined> {
    return this.db
      .table('team_users as m')
      .join('accounts as a', 'a.id', 'm.uid')
      .where({ 'm.team_id': teamId, 'a.lower_login': login.toLowerCase() })
      .first('a.*');
  }

  /** Every team membership in the organization. */
  async teamMemberships(orgId: number, trx?: Knex.Transaction): Promise<TeamMembership[]> {
    return this.db.table('team_users', trx).where({ org_id: orgId });
  }

  /** The ids of the organization's teams the user is in. */
  async teamIdsOf(orgId: number, uid: number, trx?: Knex.Transaction): Promise<number[]> {
    return (await this.db.table('team_users', trx).where({ org_id: orgId, uid }).pluck('team_id')).map(Number);
  }

  /** The ids of the team's members. */
  async uidsOfTeam(teamId: number, trx?: Knex.Transaction): Promise<number[]> {
    return (await this.db.table('team_users', trx).where({ team_id: teamId }).pluck('uid')).map(Number);
  }

  async countOfTeam(teamId: number, trx?: Knex.Transaction): Promise<number> {
    const [{ count }] = await this.db.table('team_users', trx).where({ team_id: teamId }).count<{ count: string }[]>('uid as count');
    return Number(count);
  }

  /** Adds a user to a team; false when they already are in it. */
  async joinTeam(membership: TeamMembership, trx?: Knex.Transaction): Promise<boolean> {
    // ON CONFLICT, not a check then an insert: two concurrent adds of one user both see "not a member",
    // and the second insert would hit the primary key. The one that inserts nothing finds a member.
    changed.orgs([membership.org_id]);
    const inserted = await this.db.table('team_users', trx).insert(membership).onConflict(['team_id', 'uid']).ignore().returning('uid');
    return inserted.length > 0;
  }

  /**
   * Adds a user to a team and, when that is new, to the team's organization (privately), in one statement with its
   * outbox entry (Outbox.runInOne), the team and the user looked up by the same statement: the team row and the person
   * `ref` names (either undefined when there is none), whether each membership was new, and the statement's row for
   * the outbox. Only a user is added: for a missing team, a missing person, an organization or a service account the
   * statement writes nothing (its caller refuses them). ON CONFLICT, as joinTeam: of two concurrent adds of one user,
   * the one that inserts nothing finds a member. `effects(onUndo)` answers the entry's effects and whether it is
   * written `always` or only for a user new to the team; `onUndo` is a column that is false for a user new to the team
   * and null otherwise.
   */
  async joinTeamAndOrg(
    teamId: number,
    ref: { id?: number; login?: string },
    entry: EntryInStatement,
    effects: (onUndo: StatementColumn) => { effects: EffectInStatement[]; always: boolean },
    tuplesInStatement = false,
    audit?: AuditEvent,
  ): Promise<{ team?: TeamRow; person?: PersonRow; joinedTeam: boolean; joinedOrg: boolean; written: object }> {
    const t = (table: string) => this.db.sqlName(table);
    const by = ref.id ? ['p.id = ?', ref.id] : ref.login ? ['p.lower_login = ?', ref.login.toLowerCase()] : ['false', undefined];
    const staged = effects(StatementColumn.of('joined.on_undo'));
    const tuples = tuplesByStatement(tuplesInStatement, teamMemberRows);
    const recorded = auditInStatement(this.db, audit, 'team');
    const { rows } = await this.db.knex.raw<{ rows: (TeamRow & PersonColumns & { joined_team: number; joined_org: number })[] }>(
      `with looked_team as (select * from ${t('teams')} where id = ?),` +
        ` looked_person as (select ${PERSON_COLUMNS.map((c) => `p.${c}`).join(', ')} from ${t('accounts')} as p where ${by[0]}),` +
        ` team as (insert into ${t('team_users')} (team_id, org_id, uid) select lt.id, lt.org_id, lp.id from looked_team as lt, looked_person as lp` +
        ` where lp.type = ? on conflict (team_id, uid) do nothing returning team_id, org_id, uid),` +
        ` org as (insert into ${t('org_users')} (org_id, uid, is_public) select org_id, uid, false from team on conflict (org_id, uid) do nothing returning uid),` +
        tuples.cte +
        recorded.cte +
        ` joined as (select case when exists (select 1 from team) then false end as on_undo),` +
        ` entry as (?)` +
        ` select lt.*, ${PERSON_COLUMNS.map((c) => `lp.${c} as a_${c}`).join(', ')},` +
        ` (select count(*) from team)::int as joined_team, (select count(*) from org)::int as joined_org, ?` +
        ` from joined left join looked_team as lt on true left join looked_person as lp on true left join entry on true`,
      [
        teamId,
        ...(by[1] === undefined ? [] : [by[1]]),
        ACCOUNT_TYPE.user,
        ...recorded.bindings,
        entry.insert(staged.always ? 'joined' : 'team', staged.effects),
        entry.columns,
      ],
    );
    const { joined_team, joined_org, ...rest } = rows[0];
    const [team, person] = splitPerson(rest);
    if (team.id === null) return { joinedTeam: false, joinedOrg: false, written: rows[0] };
    // Recorded once the statement answers which organization it is; should the answer be lost, the statement's write
    // with nothing recorded is announced as everything (Changes.announcement).
    changed.orgs([team.org_id]);
    if (joined_team > 0) tuples.announce(() => [teamMember(team.id, Number(person!.id))], team.org_id);
    return { team, person, joinedTeam: joined_team > 0, joinedOrg: joined_org > 0, written: rows[0] };
  }

  /** Puts team memberships back as they were. */
  async insertTeamMemberships(rows: TeamMembership[], trx?: Knex.Transaction): Promise<void> {
    changed.orgs(rows.map((r) => r.org_id));
    if (rows.length) await this.db.table('team_users', trx).insert(rows);
  }

  /** Takes these users out of a team. */
  async leaveTeam(teamId: number, uids: number[], trx?: Knex.Transaction): Promise<void> {
    const left: { org_id: number }[] = await this.db
      .table('team_users', trx)
      .where({ team_id: teamId })
      .whereIn('uid', uids)
      .delete()
      .returning('org_id');
    changed.orgs(left.map((r) => r.org_id));
  }

  /** Takes a user out of these teams of the organization. */
  async leaveTeams(orgId: number, uid: number, teamIds: number[], trx?: Knex.Transaction): Promise<void> {
    changed.orgs([orgId]);
    await this.db.table('team_users', trx).where({ org_id: orgId, uid }).whereIn('team_id', teamIds).delete();
  }
}

/** A user or a service account, with the organization a service account belongs to (null for a site-wide one). */
export type PersonRow = AccountRef & { service_account_org_id: number | string | null };
/** A person's columns as a statement that also answers another row names them (`a_` and the column). */
type PersonColumns = Record<`a_${(typeof PERSON_COLUMNS)[number]}`, any>;

/** A team row and the person a statement answered beside it (all null when there was none). */
function splitPerson(row: TeamRow & PersonColumns): [TeamRow, PersonRow | undefined] {
  const { a_id, a_type, a_login, a_is_admin, a_service_account_org_id, ...team } = row;
  const person =
    a_id === null
      ? undefined
      : { id: a_id, type: a_type, login: a_login, is_admin: a_is_admin, service_account_org_id: a_service_account_org_id };
  return [team, person];
}
const PERSON_COLUMNS = ['id', 'type', 'login', 'is_admin', 'service_account_org_id'] as const;

/** The account `ref` named, as a person: 404 when none, 400 for an organization. */
function checkPerson(row: PersonRow | undefined, ref: { id?: number; login?: string }): PersonRow {
  if (!row) throw new NotFoundError(`user ${ref.login || ref.id} does not exist`);
  if (row.type === ACCOUNT_TYPE.organization) throw new InputError(`${row.login} is an organization, not a user`);
  return row;
}

/** The user `ref` named, as `MembersStore.user` answers it: 404 when none, 400 for an organization or a service account. */
export function userOf(row: PersonRow | undefined, ref: { id?: number; login?: string }): AccountRef {
  const person = checkPerson(row, ref);
  if (person.type === ACCOUNT_TYPE.serviceAccount) throw notAUser(person);
  return person;
}

/** The refusal of a service account where a user is asked for. */
export const notAUser = (account: { login: string }) => new InputError(`${account.login} is a service account, not a user`);
