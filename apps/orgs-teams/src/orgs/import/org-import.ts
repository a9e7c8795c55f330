import type { Knex } from 'knex';
import { isUniqueViolation, type StageEffect } from '@platform/db';
import type { orgsTeamsImportV1 } from '@platform/proto';
import { withRetries } from '@platform/errors';
import { chunks, type CallContext } from '@platform/service-kit';
import { changed } from '../../changes';
import { ACCOUNT_TYPE } from '../../identity/identity';
import type { Tuple } from '../../relationships';
import { stageTuples } from '../effects';
import type { OrgsContext } from '../orgs-context';
import { OWNER_PERMISSION, OWNER_TEAM_NAME } from '../rows';
import { orgOnSite, ownerTeamOfOrg, teamMember, teamOfOrg } from '../tuples';
import { VISIBILITIES, type Visibility } from '../visibility';
import { DEFAULT_TEAM_PERMISSION, DEFAULT_TEAM_TYPE, loginsOf, problemsOf, type Catalog } from './import-checks';
import type { ImportRoles } from './import-roles';

type Counts = orgsTeamsImportV1.ImportCounts;
/** An organization's result, its counts always there. */
type Result = orgsTeamsImportV1.ImportedOrgResult & { created: Counts; existing: Counts };

/** Rows per multi-row statement: far below Postgres' 65535 bind parameters at ten columns a row. */
const ROWS_PER_STATEMENT = 2000;
/** How often a batch is written again when a concurrent change took one of its names first (it is then existing). */
const WRITE_ATTEMPTS = 3;
/** Organizations whose custom roles are written at once. */
const ROLE_WRITERS = 4;

const noCounts = (): Counts => ({ orgs: 0, teams: 0, memberships: 0, roles: 0, roleAssignments: 0 });

/** An organization of the batch that passed its checks, with the accounts it names resolved. */
interface Accepted {
  index: number;
  org: orgsTeamsImportV1.ImportedOrg;
  ownerIds: number[];
  /** Team name (lower-cased) to its members' ids. */
  memberIds: Map<string, number[]>;
}

/** What the write made of an accepted organization: its id, and its teams' ids by lower-cased name. */
interface Written {
  orgId: number;
  teamIds: Map<string, number>;
}

/**
 * The import of organizations, teams, members and custom roles in bulk (docs/import.md). One call is one batch:
 * every organization of it that passes its checks is written in one transaction, many rows per statement, and the
 * tuples a one-by-one create writes go to authz as one outbox effect right after the commit (the relay completes it
 * if the process dies first). Custom roles follow through authz's RolesService as the custom-role routes make them.
 */
export class OrgImport {
  constructor(
    private readonly orgs: OrgsContext,
    private readonly roles: ImportRoles,
  ) {}

  async importOrgs(req: orgsTeamsImportV1.ImportOrgsRequest, ctx: CallContext): Promise<orgsTeamsImportV1.ImportOrgsResponse> {
    const results: Result[] = req.orgs.map((o) => ({
      name: o.name,
      outcome: '',
      orgId: 0,
      created: noCounts(),
      existing: noCounts(),
      errors: [],
    }));
    const catalog: Catalog | undefined = req.orgs.some((o) => o.roles.length) ? await this.roles.catalog(ctx) : undefined;
    const seen = new Map<string, number>();
    req.orgs.forEach((org, i) => {
      results[i].errors.push(...problemsOf(org, catalog));
      const first = seen.get(org.name.toLowerCase());
      if (first !== undefined) results[i].errors.push(`name "${org.name}": already given at position ${first + 1} of this batch`);
      else seen.set(org.name.toLowerCase(), i);
    });

    const accepted = await this.resolveAccounts(req, results);
    let written = new Map<number, Written>();
    if (accepted.length) {
      // Another change took a name of the batch meanwhile (a unique violation): the next attempt, at once, finds it and
      // counts it as existing.
      written = await withRetries(
        { attempts: WRITE_ATTEMPTS, baseDelayMs: 0 },
        (err) => isUniqueViolation(err),
        (attempt) => {
          if (attempt > 1) for (const a of accepted) Object.assign(results[a.index], { created: noCounts(), existing: noCounts() });
          return this.orgs.outbox.run((trx, stage) => this.write(trx, stage, accepted, results), { call: ctx });
        },
      );
      await this.writeRoles(accepted, written, results, ctx);
    }
    for (const r of results) r.outcome = outcomeOf(r);
    return { results };
  }

  /**
   * The ids of the accounts the organizations name: an organization naming a login that is not a user's, or whose
   * name is a user's, is refused. Answers the organizations still accepted.
   */
  private async resolveAccounts(req: orgsTeamsImportV1.ImportOrgsRequest, results: Result[]): Promise<Accepted[]> {
    const candidates = req.orgs.map((org, index) => ({ org, index })).filter(({ index }) => results[index].errors.length === 0);
    const logins = new Set<string>();
    for (const { org } of candidates) {
      for (const l of loginsOf(org)) logins.add(l);
      logins.add(org.name.toLowerCase());
    }
    const accounts = new Map<string, { id: number; type: number }>();
    for (const part of chunks([...logins], ROWS_PER_STATEMENT)) {
      const rows: { id: number | string; type: number; lower_login: string }[] = await this.orgs.db
        .table('accounts')
        .whereIn('lower_login', part)
        .select('id', 'type', 'lower_login');
      for (const r of rows) accounts.set(r.lower_login, { id: Number(r.id), type: r.type });
    }
    const requesterIsUser = candidates.some(({ org }) => org.owners.length === 0)
      ? !!(await this.orgs.db.table('accounts').where({ id: req.requesterId, type: ACCOUNT_TYPE.user }).first('id'))
      : true;

    const accepted: Accepted[] = [];
    for (const { org, index } of candidates) {
      const errors = results[index].errors;
      const taken = accounts.get(org.name.toLowerCase());
      if (taken && taken.type !== ACCOUNT_TYPE.organization)
        errors.push(`name "${org.name}": already taken by ${taken.type === ACCOUNT_TYPE.user ? 'a user' : 'a service account'}`);
      const quoted = (logins: string[]) => logins.map((l) => `"${l}"`).join(', ');
      const unknown = loginsOf(org).filter((l) => !accounts.has(l));
      const notUsers = loginsOf(org).filter((l) => accounts.has(l) && accounts.get(l)!.type !== ACCOUNT_TYPE.user);
      if (unknown.length) errors.push(`no user named ${quoted(unknown)}: members must be existing users (create them first)`);
      if (notUsers.length) errors.push(`${quoted(notUsers)}: an organization or a service account, not a user`);
      if (org.owners.length === 0 && !requesterIsUser) errors.push('owners: none given, and the requester is not a user who could own it');
      if (errors.length) continue;
      const id = (login: string) => accounts.get(login.toLowerCase())!.id;
      accepted.push({
        index,
        org,
        ownerIds: org.owners.length ? [...new Set(org.owners.map(id))] : [req.requesterId],
        memberIds: new Map(org.teams.map((t) => [t.name.toLowerCase(), [...new Set(t.members.map(id))]])),
      });
    }
    return accepted;
  }

  /**
   * Writes the accepted organizations in the running transaction: what is missing is inserted (organizations, the
   * owner team, teams, team and organization memberships), what exists is counted, and the tuples of what was
   * inserted are staged, the ones a one-by-one create writes.
   */
  private async write(trx: Knex.Transaction, stage: StageEffect, accepted: Accepted[], results: Result[]): Promise<Map<number, Written>> {
    const db = this.orgs.db;
    const tuples: Tuple[] = [];
    const names = accepted.map((a) => a.org.name.toLowerCase());

    // Organizations: the existing ones locked, so a concurrent delete waits for this batch (or this batch for it).
    const orgIds = new Map<string, number>();
    for (const part of chunks(names, ROWS_PER_STATEMENT)) {
      const rows: { id: number | string; lower_login: string }[] = await db
        .table('accounts', trx)
        .where({ type: ACCOUNT_TYPE.organization })
        .whereIn('lower_login', part)
        .forUpdate()
        .select('id', 'lower_login');
      for (const r of rows) orgIds.set(r.lower_login, Number(r.id));
    }
    const existingOrgIds = new Set(orgIds.values());
    const newOrgs = accepted.filter((a) => !orgIds.has(a.org.name.toLowerCase()));
    for (const part of chunks(newOrgs, ROWS_PER_STATEMENT)) {
      const rows: { id: number | string; lower_login: string }[] = await db
        .table('accounts', trx)
        .insert(
          part.map(({ org }) => ({
            type: ACCOUNT_TYPE.organization,
            login: org.name,
            lower_login: org.name.toLowerCase(),
            full_name: org.fullName,
            description: org.description,
            website: org.website,
            location: org.location,
            manager_endpoint: '',
            visibility: org.visibility ? VISIBILITIES.indexOf(org.visibility as Visibility) : 0,
            email: '',
          })),
        )
        .returning(['id', 'lower_login']);
      for (const r of rows) orgIds.set(r.lower_login, Number(r.id));
    }
    const written = new Map<number, Written>();
    for (const a of accepted) {
      const orgId = orgIds.get(a.org.name.toLowerCase())!;
      written.set(a.index, { orgId, teamIds: new Map() });
      results[a.index].orgId = orgId;
      const counts = existingOrgIds.has(orgId) ? results[a.index].existing : results[a.index].created;
      counts.orgs++;
      if (!existingOrgIds.has(orgId)) tuples.push(orgOnSite(orgId));
    }
    changed.orgs(orgIds.values());

    // Teams: the owner team is found by its permission, the others by name.
    const byOrg = new Map<number, Accepted>(accepted.map((a) => [written.get(a.index)!.orgId, a]));
    for (const part of chunks([...existingOrgIds], ROWS_PER_STATEMENT)) {
      const rows: { id: number | string; org_id: number | string; lower_name: string; permission: string }[] = await db
        .table('teams', trx)
        .whereIn('org_id', part)
        .select('id', 'org_id', 'lower_name', 'permission');
      for (const r of rows) {
        const a = byOrg.get(Number(r.org_id))!;
        const key = r.permission === OWNER_PERMISSION ? OWNER_KEY : r.lower_name;
        written.get(a.index)!.teamIds.set(key, Number(r.id));
      }
    }
    const wantedTeams: { a: Accepted; key: string; row: Record<string, unknown> }[] = [];
    for (const a of accepted) {
      const { orgId, teamIds } = written.get(a.index)!;
      if (teamIds.has(OWNER_KEY)) results[a.index].existing.teams++;
      else
        wantedTeams.push({
          a,
          key: OWNER_KEY,
          row: {
            org_id: orgId,
            name: OWNER_TEAM_NAME,
            lower_name: OWNER_TEAM_NAME.toLowerCase(),
            description: 'Owners of the organization',
            permission: OWNER_PERMISSION,
            type: 'general',
            units: null,
          },
        });
      for (const t of a.org.teams) {
        const key = t.name.toLowerCase();
        if (teamIds.has(key)) results[a.index].existing.teams++;
        else
          wantedTeams.push({
            a,
            key,
            row: {
              org_id: orgId,
              name: t.name,
              lower_name: key,
              description: t.description,
              permission: t.permission || DEFAULT_TEAM_PERMISSION,
              type: t.type || DEFAULT_TEAM_TYPE,
              units: null,
            },
          });
      }
    }
    for (const part of chunks(wantedTeams, ROWS_PER_STATEMENT)) {
      const rows: { id: number | string }[] = await db
        .table('teams', trx)
        .insert(part.map((w) => w.row))
        .returning('id');
      // Postgres answers RETURNING in the order of the VALUES rows.
      part.forEach((w, i) => {
        const { orgId, teamIds } = written.get(w.a.index)!;
        const teamId = Number(rows[i].id);
        teamIds.set(w.key, teamId);
        results[w.a.index].created.teams++;
        tuples.push(...teamOfOrg(orgId, teamId));
        if (w.key === OWNER_KEY) tuples.push(ownerTeamOfOrg(orgId, teamId));
      });
    }

    // Memberships: inserted unless there, so what was there is what the insert skipped.
    const memberships: { team_id: number; org_id: number; uid: number; index: number }[] = [];
    for (const a of accepted) {
      const { orgId, teamIds } = written.get(a.index)!;
      const add = (key: string, uids: number[]) => {
        for (const uid of uids) memberships.push({ team_id: teamIds.get(key)!, org_id: orgId, uid, index: a.index });
      };
      add(OWNER_KEY, a.ownerIds);
      for (const [key, uids] of a.memberIds) add(key, uids);
    }
    for (const part of chunks(memberships, ROWS_PER_STATEMENT * 3)) {
      const inserted: { team_id: number | string; uid: number | string }[] = await db
        .table('team_users', trx)
        .insert(part.map(({ team_id, org_id, uid }) => ({ team_id, org_id, uid })))
        .onConflict(['team_id', 'uid'])
        .ignore()
        .returning(['team_id', 'uid']);
      const added = new Set(inserted.map((r) => `${r.team_id} ${r.uid}`));
      for (const m of part) {
        const isNew = added.has(`${m.team_id} ${m.uid}`);
        (isNew ? results[m.index].created : results[m.index].existing).memberships++;
        if (isNew) tuples.push(teamMember(m.team_id, m.uid));
      }
    }
    const orgMembers = [
      ...new Map(memberships.map((m) => [`${m.org_id} ${m.uid}`, { org_id: m.org_id, uid: m.uid, is_public: false }])).values(),
    ];
    for (const part of chunks(orgMembers, ROWS_PER_STATEMENT * 3))
      await db.table('org_users', trx).insert(part).onConflict(['org_id', 'uid']).ignore();

    stageTuples(stage, tuples);
    return written;
  }

  /**
   * Creates the custom roles an organization lacks (by name) with the teams that name them, and assigns existing
   * ones to the teams that name them and lack them, as `POST` and `PUT /authz/roles` do. After the rows and their
   * tuples: authz assigns a role only to a team of the organization. A refusal is that organization's error; its
   * rows stand, and running the file again completes it.
   */
  private async writeRoles(accepted: Accepted[], written: Map<number, Written>, results: Result[], ctx: CallContext): Promise<void> {
    const pending = accepted.filter((a) => a.org.roles.length > 0);
    const work = async (a: Accepted) => {
      const { orgId, teamIds } = written.get(a.index)!;
      const result = results[a.index];
      try {
        const existing = await this.roles.rolesOf(orgId, ctx);
        for (const role of a.org.roles) {
          const name = role.name.trim().toLowerCase();
          const wanted = a.org.teams
            .filter((t) => t.roles.some((r) => r.trim().toLowerCase() === name))
            .map((t) => teamIds.get(t.name.toLowerCase())!);
          const found = existing.get(name);
          if (!found) {
            await this.roles.create(orgId, role, wanted, ctx);
            result.created.roles++;
            result.created.roleAssignments += wanted.length;
            continue;
          }
          result.existing.roles++;
          const missing = wanted.filter((id) => !found.teamIds.includes(id));
          result.existing.roleAssignments += wanted.length - missing.length;
          if (missing.length) {
            await this.roles.assign(orgId, found.id, [...found.teamIds, ...missing], ctx);
            result.created.roleAssignments += missing.length;
          }
        }
      } catch (err) {
        result.errors.push(
          `custom roles: ${(err as Error).message}; the organization's other rows are written, import it again once fixed`,
        );
      }
    };
    for (const part of chunks(pending, ROLE_WRITERS)) await Promise.all(part.map(work));
  }
}

/** The key of the owner team among an organization's teams by lower-cased name: no team name has a space. */
const OWNER_KEY = ' owners';

/** What became of an organization, from what was written and what was there. */
function outcomeOf(r: Result): string {
  if (r.orgId === 0) return 'refused';
  if (r.created.orgs) return 'created';
  const c = r.created;
  return c.teams || c.memberships || c.roles || c.roleAssignments ? 'completed' : 'unchanged';
}
