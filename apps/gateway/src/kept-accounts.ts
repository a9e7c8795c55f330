import { ACCOUNTS_CHANGED, ORGS_CHANGED, type AccountsChanged, type OrgsChanged } from '@platform/bus';
import type { orgsTeamsV1 } from '@platform/proto';
import { keptPerGateway } from './kept-per-gateway';
import type { EdgeContext } from './route';

/** What the rows show of an account (a user or an organization) they do not act on: its name, email and type. */
export type AccountName = Pick<orgsTeamsV1.User, 'id' | 'login' | 'email' | 'type'>;

/** GetAccounts takes at most this many ids a call. */
const ACCOUNTS_PER_CALL = 1000;

// Kept per gateway (kept-per-gateway.ts), so a row that names other accounts (the billing dashboard's, a role's
// principals) makes no call for them. An account's login, email and type change only through orgs-teams' account and
// organization writes, each followed by the notice naming it (`identity.accounts.changed`, `identity.orgs.changed`;
// accounts and organizations share one id space). Misses are not kept: an account made since is found at once.
const accountTag = (id: number) => `account:${id}`;
const keptAccounts = keptPerGateway<AccountName>(
  (config) => ({ name: 'gateway.accounts', ttlMs: config.ORG_CACHE_TTL_MS, maxEntries: 10_000 }),
  [
    { subject: ACCOUNTS_CHANGED, stale: (n) => ((n as AccountsChanged).userIds ?? []).map(accountTag) },
    { subject: ORGS_CHANGED, stale: (n) => ((n as OrgsChanged).orgIds ?? []).map(accountTag) },
  ],
);

/** The accounts of these ids that exist, by id: kept, or one GetAccounts call per 1,000 others. */
export async function accountsOf(ctx: EdgeContext, ids: number[]): Promise<Map<number, AccountName>> {
  const distinct = [...new Set(ids.filter((id) => id > 0))].map(String);
  const found = await keptAccounts.of(ctx.config).throughMany(
    distinct,
    async (missing) => {
      const chunks: number[][] = [];
      for (let i = 0; i < missing.length; i += ACCOUNTS_PER_CALL) chunks.push(missing.slice(i, i + ACCOUNTS_PER_CALL).map(Number));
      const answers = await Promise.all(chunks.map((chunk) => ctx.backends.orgsTeams.identity.getAccounts({ ids: chunk })));
      return new Map(answers.flatMap((a) => a.users).map((u) => [String(u.id), { id: u.id, login: u.login, email: u.email, type: u.type }]));
    },
    { tags: (account) => [accountTag(account.id)] },
    ctx.arrivedAt,
  );
  return new Map([...found.values()].map((a) => [a.id, a]));
}

// The names of an organization's teams, kept per gateway for the rows that name teams they do not act on (a role's
// principals): a team is made, renamed or deleted only through orgs-teams, which then sends the organizations notice
// naming its organization.
const keptTeamNames = keptPerGateway<Map<number, string>>(
  (config) => ({ name: 'gateway.team-names', ttlMs: config.ORG_CACHE_TTL_MS, maxEntries: 1_000 }),
  [{ subject: ORGS_CHANGED, stale: (n) => ((n as OrgsChanged).orgIds ?? []).map((id) => `org:${id}`) }],
);

/** The names of the organization's teams, by id: kept, or one ListTeams call. */
export function teamNamesOf(ctx: EdgeContext, orgId: number): Promise<Map<number, string>> {
  return keptTeamNames.of(ctx.config).through(
    String(orgId),
    async () => new Map((await ctx.backends.orgsTeams.organizations.listTeams({ orgId })).teams.map((t) => [t.id, t.name])),
    { tags: [`org:${orgId}`] },
    ctx.arrivedAt,
  );
}
