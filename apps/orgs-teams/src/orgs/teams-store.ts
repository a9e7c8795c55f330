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
import { changed } from '../changes';
import { containing } from '../like';
import { ACCOUNT_TYPE } from '../identity/identity';
import { ORG_COLUMNS, OWNER_PERMISSION, type OrgRow, type TeamRow } from './rows';
import { teamOfOrg, teamOfOrgRows, tuplesByStatement } from './tuples';
import { auditInStatement, type AuditEvent } from '../audit/audit-store';

/** Team lists are whole unless a page is asked for, with no maximum: services read every team, the gateway pages. */
const PAGES: WholeListLimits = { defaultLimit: 'whole list' };

/** What a create or an edit writes of a team (the lower-cased name follows the name). */
export type TeamFields = Pick<TeamRow, 'name' | 'description' | 'permission' | 'type' | 'units'>;

/** What the organization's columns are called beside a team's in the answer of the statement that creates it. */
const ORG_PREFIX = 'organization__';

/** Columns of team fields: `lower_name` beside the name, units as JSON. */
function columns(fields: Partial<TeamFields>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  if (fields.name !== undefined) out.lower_name = fields.name.toLowerCase();
  if (fields.units !== undefined) out.units = fields.units === null ? null : JSON.stringify(fields.units);
  return out;
}

/** The rows of teams (identity.teams). Every method takes an optional transaction. */
export class TeamsStore {
  private constructor(private readonly db: Database) {}

  static create(db: Database): TeamsStore {
    return new TeamsStore(db);
  }

  async find(id: number, trx?: Knex.Transaction): Promise<TeamRow | undefined> {
    return this.db.table('teams', trx).where({ id }).first();
  }

  /** The organization's teams, owner team first, then by name. */
  async ofOrg(orgId: number, trx?: Knex.Transaction): Promise<TeamRow[]> {
    return this.db.table('teams', trx).where({ org_id: orgId }).orderByRaw('(permission = ?) desc, lower_name', [OWNER_PERMISSION]);
  }

  /**
   * One page of the organization's teams, owner team first, then by name; with `q`, those whose name (or with
   * `includeDesc` description) contains it, regardless of case.
   */
  async pageOfOrg(orgId: number, page: PageRequest | undefined, search?: { q: string; includeDesc: boolean }): Promise<Paged<TeamRow>> {
    const base = this.db.table('teams').where({ org_id: orgId });
    if (search?.q) {
      const pattern = containing(search.q.toLowerCase());
      base.andWhere((w) => {
        w.where('lower_name', 'like', pattern);
        if (search.includeDesc) w.orWhereRaw('lower(description) like ?', [pattern]);
      });
    }
    return pageOfQuery(base, pageOf(page, PAGES), (q) => q.orderByRaw('(permission = ?) desc, lower_name', [OWNER_PERMISSION]).select('*'));
  }

  /** One page of the teams the user is in, across organizations, by name (then by id, the older first). */
  async pageOfMember(uid: number, page: PageRequest | undefined): Promise<Paged<TeamRow>> {
    const base = this.db
      .table('teams as t')
      .whereIn('t.id', (sub: Knex.QueryBuilder) => sub.select('team_id').from(`${this.db.schema}.team_users`).where({ uid }));
    return pageOfQuery(base, pageOf(page, PAGES), (q) => q.orderBy([{ column: 't.lower_name' }, { column: 't.id' }]).select('t.*'));
  }

  /** The id of the organization's owner team; `lock` holds its row until the transaction ends. */
  async ownerTeamId(orgId: number, trx?: Knex.Transaction, lock = false): Promise<number | undefined> {
    const q = this.db.table('teams', trx).where({ org_id: orgId, permission: OWNER_PERMISSION }).first('id');
    return (await (lock ? q.forUpdate() : q))?.id;
  }

  /**
   * Inserts a team into its organization and, in the same statement, the outbox entry of `effects` (Outbox.runInOne),
   * which take the new team's id from the statement; answers the row, the organization's row as the statement read it,
   * and the statement's row for the outbox. Nothing is written, and undefined answered, when `orgId` is no organization.
   */
  async insertInOne(
    orgId: number,
    fields: TeamFields,
    entry: EntryInStatement,
    effects: (teamId: StatementColumn) => EffectInStatement[],
    tuplesInStatement = false,
    audit?: AuditEvent,
  ): Promise<{ row: TeamRow; org: OrgRow; written: object } | undefined> {
    const t = (table: string) => this.db.sqlName(table);
    const tuples = tuplesByStatement(tuplesInStatement, teamOfOrgRows);
    const recorded = auditInStatement(this.db, audit, 'team');
    const values = Object.entries({ org_id: orgId, ...columns(fields) }).filter(([, v]) => v !== undefined);
    const { rows } = await this.db.knex.raw<{ rows: Record<string, unknown>[] }>(
      `with org as (select ${ORG_COLUMNS.join(', ')} from ${t('accounts')} where id = ? and type = ?),` +
        ` team as (insert into ${t('teams')} (${values.map(() => '??').join(', ')})` +
        ` select ${values.map(() => '?').join(', ')} from org returning *),` +
        tuples.cte +
        recorded.cte +
        ` entry as (?)` +
        ` select team.*, ${ORG_COLUMNS.map((c) => `org.${c} as ${ORG_PREFIX}${c}`).join(', ')}, ? from team, org, entry`,
      [
        orgId,
        ACCOUNT_TYPE.organization,
        ...values.map(([k]) => k),
        ...values.map(([, v]) => v),
        ...recorded.bindings,
        entry.insert('team', effects(StatementColumn.of('team.id'))),
        entry.columns,
      ],
    );
    if (!rows.length) return undefined;
    const written = rows[0];
    const row: Record<string, unknown> = {};
    const org: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(written)) {
      if (k.startsWith(ORG_PREFIX)) org[k.slice(ORG_PREFIX.length)] = v;
      else if (k !== 'outbox_entry_id' && k !== 'outbox_entry_effects') row[k] = v;
    }
    changed.orgs([orgId]);
    tuples.announce(() => teamOfOrg(orgId, Number(row.id)), orgId);
    return { row: row as unknown as TeamRow, org: org as unknown as OrgRow, written };
  }

  /** Changes the given fields and sets `updated_at`. */
  async update(id: number, changes: Partial<TeamFields>, updatedAt: Date, trx?: Knex.Transaction): Promise<void> {
    const rows: { org_id: number }[] = await this.db
      .table('teams', trx)
      .where({ id })
      .update({ ...columns(changes), updated_at: updatedAt })
      .returning('org_id');
    changed.orgs(rows.map((r) => r.org_id));
  }

  /** Puts a deleted team's row back as it was, id and timestamps included. */
  async restore(row: TeamRow, trx?: Knex.Transaction): Promise<void> {
    changed.orgs([row.org_id]);
    await this.db.table('teams', trx).insert({ ...row, ...columns({ units: row.units }) });
  }

  /** Deletes the team; its memberships go with it (on delete cascade). */
  async delete(id: number, trx?: Knex.Transaction): Promise<void> {
    const rows: { org_id: number }[] = await this.db.table('teams', trx).where({ id }).delete().returning('org_id');
    changed.orgs(rows.map((r) => r.org_id));
  }
}
