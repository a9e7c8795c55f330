import type { Knex } from 'knex';
import type { Database, Outbox, StageEffect } from '@platform/db';
import type { OrgCache } from './org-cache';
import type { OrgRow } from './rows';

/** What the organization features (organizations, members, teams, team members) are built from. */
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
  /**
   * Organizations by id and slug for reads outside transactions; none: every read asks the database. A change
   * evicts it where it writes the row and again when its call announces it (changes.ts).
   */
  cache?: OrgCache;
  /**
   * authz keeps its tuples in this database (its embedded engine on a Postgres server, no OpenFGA): a change that makes
   * an organization or a team, or adds a member to a team, writes their tuples in its own statement instead of asking
   * authz after its commit (D134).
   */
  tuplesInStatement?: boolean;
}

/** Whether removing a site admin from this organization is refused (it is the administrative organization). */
export function protectsSiteAdmins(orgs: OrgsContext, org: OrgRow): boolean {
  return !!orgs.adminOrg && orgs.adminOrg.toLowerCase() === org.login.toLowerCase();
}
