import { chunks } from '@platform/service-kit';
import type { orgsTeamsV1 } from '@platform/proto';
import type { EdgeContext } from './route';

/** What the rows show of an account (a user or an organization) they do not act on: its name, email and type. */
export type AccountName = Pick<orgsTeamsV1.User, 'id' | 'login' | 'email' | 'type'>;

/** GetAccounts takes at most this many ids a call. */
const ACCOUNTS_PER_CALL = 1000;

/**
 * The accounts of these ids that exist, by id, for the rows that name accounts they do not act on (the billing
 * dashboard's, a role's principals): one GetAccounts call per 1,000 not kept by orgs-teams' read model
 * (@platform/orgs-teams-client).
 */
export async function accountsOf(ctx: EdgeContext, ids: number[]): Promise<Map<number, AccountName>> {
  const distinct = [...new Set(ids.filter((id) => id > 0))];
  const answers = await Promise.all(
    chunks(distinct, ACCOUNTS_PER_CALL).map((part) => ctx.kept.orgsTeams.identity.getAccounts({ ids: part })),
  );
  return new Map(answers.flatMap((a) => a.users).map((u) => [u.id, { id: u.id, login: u.login, email: u.email, type: u.type }]));
}

/** The names of the organization's teams, by id: its list of teams, kept by orgs-teams' read model. */
export async function teamNamesOf(ctx: EdgeContext, orgId: number): Promise<Map<number, string>> {
  return new Map((await ctx.kept.orgsTeams.organizations.listTeams({ orgId })).teams.map((t) => [t.id, t.name]));
}
