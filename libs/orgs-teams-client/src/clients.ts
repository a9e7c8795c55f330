import { createHash } from 'node:crypto';
import {
  accountsNamed,
  ACCOUNTS_CHANGED,
  allOf,
  besidesRowsBrought,
  following,
  keptServiceReads,
  NoticeCache,
  ORGS_CHANGED,
  ORGS_TEAMS_OTHER_CHANGED,
  orgRowsBrought,
  orgRowsNamed,
  orgsNamed,
  orgTeamsNamed,
  SIGNIN_CHANGED,
  TUPLES_CHANGED,
  tupleOrgsNamed,
  type KeptRead,
  type NoticeRule,
  type ReadModel,
} from '@platform/bus';
import {
  orgClaimsV1,
  orgsTeamsAuditV1,
  orgsTeamsAvatarsV1,
  orgsTeamsOrgsV1,
  orgsTeamsSettingsV1,
  orgsTeamsV1,
  orgTokensV1,
  serviceAccountsV1,
} from '@platform/proto';
import { backendState, createClients, type CallOptions, type ClientOptions, type PromiseClient } from '@platform/service-kit';

/** orgs-teams's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const ORGS_TEAMS_SERVICES = {
  identity: orgsTeamsV1.OrgsTeamsServiceService,
  organizations: orgsTeamsOrgsV1.OrganizationsServiceService,
  orgTokens: orgTokensV1.OrgTokensServiceService,
  claims: orgClaimsV1.OrgClaimsServiceService,
  siteSettings: orgsTeamsSettingsV1.SiteSettingsServiceService,
  avatars: orgsTeamsAvatarsV1.AvatarsServiceService,
  audit: orgsTeamsAuditV1.AuditServiceService,
  serviceAccounts: serviceAccountsV1.ServiceAccountsServiceService,
} as const;

/** orgs-teams' services as another app calls them. */
export interface OrgsTeamsClients {
  /** Accounts, tokens, authentication. */
  identity: PromiseClient<typeof orgsTeamsV1.OrgsTeamsServiceService>;
  /** Organizations, members, teams. */
  organizations: PromiseClient<typeof orgsTeamsOrgsV1.OrganizationsServiceService>;
  /** Sync tokens, system-admin access tokens, bus accounts. */
  orgTokens: PromiseClient<typeof orgTokensV1.OrgTokensServiceService>;
  /** Standalone-organization claims. */
  claims: PromiseClient<typeof orgClaimsV1.OrgClaimsServiceService>;
  /** Branding, allowed domains, registration. */
  siteSettings: PromiseClient<typeof orgsTeamsSettingsV1.SiteSettingsServiceService>;
  /** Organization avatars and their objects. */
  avatars: PromiseClient<typeof orgsTeamsAvatarsV1.AvatarsServiceService>;
  /** The audit trail of administrative changes. */
  audit: PromiseClient<typeof orgsTeamsAuditV1.AuditServiceService>;
  /** Service accounts of organizations and of the site, and their tokens. */
  serviceAccounts: PromiseClient<typeof serviceAccountsV1.ServiceAccountsServiceService>;
}

/** What a reader keeps of orgs-teams' answers, and how long at most (0 keeps nothing). */
export interface OrgsTeamsKeeping {
  /** Organizations, accounts and teams (ORG_CACHE_TTL_MS). */
  ttlMs: number;
  /** Who a token belongs to (AUTH_CACHE_TTL_MS). */
  tokenTtlMs: number;
  /** Names the caches in the metrics (`<reader>.tokens`, `<reader>.orgs`, ...). */
  reader: string;
}

/** The read model, and how a reader forgets at once the tokens of accounts it changed itself. */
export interface OrgsTeamsReadModel extends ReadModel {
  /** Forgets the tokens of these accounts (all tokens without ids) before the notice comes back. */
  forgetTokens(accountIds?: number[]): void;
}

/** orgs-teams' clients, answering from what the reader keeps when `keep` is given (see keptOrgsTeams). */
export function orgsTeamsClients(
  address: string,
  opts: ClientOptions,
  keep?: OrgsTeamsKeeping,
): { clients: OrgsTeamsClients; readModel: OrgsTeamsReadModel } {
  const clients: OrgsTeamsClients = createClients(ORGS_TEAMS_SERVICES, address, opts);
  if (!keep) return { clients, readModel: { ...allOf([]), forgetTokens: () => {} } };
  const available = () => backendState(opts.name).available;
  const kept = keptOrgsTeams(clients, keep);
  const syncTokens = keptSyncTokens(kept.clients.orgTokens, { ...keep, available });
  const reads = keptServiceReads({ ...kept.clients, orgTokens: syncTokens.client }, ORGS_TEAMS_READS, {
    name: `${keep.reader}.orgs-teams`,
    ttlMs: keep.ttlMs,
    available,
  });
  return {
    clients: reads.clients,
    readModel: { ...allOf([kept.readModel, syncTokens.readModel, reads.readModel]), forgetTokens: kept.readModel.forgetTokens },
  };
}

/** Milliseconds until the earliest of these RFC 3339 times still to come; undefined when there is none. */
function untilFirst(times: readonly string[]): number | undefined {
  const left = times.map((t) => Date.parse(t) - Date.now()).filter((ms) => ms > 0);
  return left.length ? Math.min(...left) : undefined;
}

/** Milliseconds until the earliest of these Unix times (seconds) still to come; undefined when there is none. */
function untilFirstUnix(times: readonly number[]): number | undefined {
  const left = times
    .filter((t) => t > 0)
    .map((t) => t * 1000 - Date.now())
    .filter((ms) => ms > 0);
  return left.length ? Math.min(...left) : undefined;
}

/**
 * What every other kept answer of orgs-teams shows: its accounts, organizations and teams (every write of which is
 * announced as ACCOUNTS_CHANGED or ORGS_CHANGED, naming them, or both meaning everything; changes.ts in orgs-teams), what
 * it keeps besides (settings, mappings, avatars, claims, sync tokens and bus accounts:
 * ORGS_TEAMS_OTHER_CHANGED, which names nothing), and the memberships and roles that are authz's tuples. An answer about
 * one organization or account says so (`about`), and goes only with a notice naming it; one that does not goes with
 * every notice of the subjects it depends on.
 */
const ORGS_TEAMS_ANSWER: KeptRead = { stale: [ACCOUNTS_CHANGED, ORGS_CHANGED, ORGS_TEAMS_OTHER_CHANGED, TUPLES_CHANGED] };

/**
 * An answer showing sign-in state as well: a token's or a session's last use, an account's last sign-in, sessions,
 * second factors and their recovery codes, lockouts. orgs-teams announces each change of it (SIGNIN_CHANGED), the
 * incidental writes of its reads too (a token's last use is written at most once a minute).
 */
const SIGNIN_ANSWER: KeptRead = { stale: [...ORGS_TEAMS_ANSWER.stale, SIGNIN_CHANGED] };

const account = (id: number | string) => `account:${Number(id)}`;
const org = (id: number | string) => `org:${Number(id)}`;
/** Names nothing: only a notice naming everything drops the answer for that subject. */
const none = () => [];

/**
 * An answer about one organization (its members, a member's permissions, a membership, its mappings), and about the
 * accounts `accounts` names; without `accounts`, any account's change drops it. A request naming no organization
 * (`orgId` 0: every organization's mappings) is dropped by every notice of either subject.
 */
const ofOrg = <R extends { orgId: number }>(accounts?: (req: R, answer: never) => readonly string[]): KeptRead['about'] => {
  const named = (subject: string) => (req: R) => (req.orgId ? [org(req.orgId)] : [subject]);
  return {
    [ORGS_CHANGED]: named(ORGS_CHANGED),
    [TUPLES_CHANGED]: named(TUPLES_CHANGED),
    ...(accounts && { [ACCOUNTS_CHANGED]: accounts }),
  };
};

/**
 * An answer about one account's own state (its tokens, sessions, second factor, external identities): its account and
 * sign-in notices name it; no organization's or tuple's change shows in it.
 */
const ofAccount = <R extends { userId: number }>(): KeptRead['about'] => ({
  [ACCOUNTS_CHANGED]: (req: R) => [account(req.userId)],
  [SIGNIN_CHANGED]: (req: R) => [account(req.userId)],
  [ORGS_CHANGED]: none,
  [TUPLES_CHANGED]: none,
});

/** Accounts by id: an account's or an organization's change (one id space), and its own tuples as a user. */
const ofAccounts = (ids: readonly (number | string)[]) => ids.flatMap((id) => [account(id), org(id), `@user:${Number(id)}`]);
const byIds = <R>(ids: (req: R, answer: never) => readonly (number | string)[]): KeptRead['about'] => ({
  [ACCOUNTS_CHANGED]: (req: R, answer: never) => ofAccounts(ids(req, answer)),
  [ORGS_CHANGED]: (req: R, answer: never) => ofAccounts(ids(req, answer)),
  [TUPLES_CHANGED]: (req: R, answer: never) => ofAccounts(ids(req, answer)),
});

const membersOf = (req: { orgId?: number; teamId?: number; viewerId?: number }, answer: { members: { id: number }[] }) => [
  ...(req.viewerId ? [account(req.viewerId)] : []),
  ...answer.members.map((m) => account(m.id)),
];

/** The site's settings: written only as ORGS_TEAMS_OTHER_CHANGED announces. */
const SITE_SETTINGS: KeptRead = { stale: [ORGS_TEAMS_OTHER_CHANGED] };

/** How long a system-admin token shows recent activity after its last use (orgs-teams' org-tokens). */
const RECENT_ACTIVITY_MS = 7 * 24 * 3600 * 1000;

/**
 * The other reads of orgs-teams a reader keeps, dropped by any of its notices or a tuple notice, the ones showing
 * sign-in state by the sign-in notice too. What changes with the clock alone is kept until it would: a lockout until
 * it ends, a session until it expires, a token's recent activity until it is no longer recent. A sync token's secret is
 * shown once: kept only once it is gone (keptSyncTokens). Not kept: a user search counting who is locked out beside a
 * page (none asks that), a verification link's answer (it is spent by the asking), and the audit trail (site admins
 * list it; an event is written with every change made through the API, which, were it kept, would drop all of these).
 */
export const ORGS_TEAMS_READS = {
  identity: {
    getUser: { ...ORGS_TEAMS_ANSWER, about: byIds((_req, user: orgsTeamsV1.User) => [user.id]) },
    getUsers: { ...ORGS_TEAMS_ANSWER, about: byIds((req: orgsTeamsV1.GetUsersRequest) => req.ids) },
    listUserAccounts: ORGS_TEAMS_ANSWER,
    searchUsers: {
      ...SIGNIN_ANSWER,
      ttlMs: (found) => untilFirstUnix((found as orgsTeamsV1.SearchUsersResponse).users.map((u) => u.signInLockedUntilUnix)),
    },
    listTokens: { ...SIGNIN_ANSWER, about: ofAccount() },
    listSessions: {
      ...SIGNIN_ANSWER,
      about: ofAccount(),
      ttlMs: (found) => untilFirstUnix((found as orgsTeamsV1.ListSessionsResponse).sessions.map((s) => s.expiresUnix)),
    },
    getTwoFactor: { ...SIGNIN_ANSWER, about: ofAccount() },
    getTwoFactorRequirement: ORGS_TEAMS_ANSWER,
    listGroupMappings: { ...ORGS_TEAMS_ANSWER, about: ofOrg(none) },
    listExternalIdentities: { ...ORGS_TEAMS_ANSWER, about: ofAccount() },
  },
  organizations: {
    // With its roles only (keptOrgsTeams keeps a team without them), until the first of its time-bound roles ends.
    getTeam: {
      ...ORGS_TEAMS_ANSWER,
      // By the organization the answer names (a request may leave it 0), and its role assignments (`@team:3`).
      about: {
        [ORGS_CHANGED]: (_req: orgsTeamsOrgsV1.GetTeamRequest, team: orgsTeamsOrgsV1.Team) => [org(team.organization?.id ?? 0)],
        [TUPLES_CHANGED]: (req: orgsTeamsOrgsV1.GetTeamRequest, team: orgsTeamsOrgsV1.Team) => [
          org(team.organization?.id ?? 0),
          `@team:${Number(req.teamId)}`,
        ],
        [ACCOUNTS_CHANGED]: none,
      },
      keep: (req: orgsTeamsOrgsV1.GetTeamRequest) => req.withRoles,
      ttlMs: (team) => untilFirst(Object.values((team as orgsTeamsOrgsV1.Team).roleUntil ?? {})),
    },
    listMembers: { ...ORGS_TEAMS_ANSWER, about: ofOrg(membersOf) },
    // Asked by login: the account behind it is not known until answered, so any account's change drops it.
    getMembership: { ...ORGS_TEAMS_ANSWER, about: ofOrg() },
    // A team's members: its tuples name the team; its organization is not in the request, so any organization's change
    // drops them.
    listTeamMembers: {
      ...ORGS_TEAMS_ANSWER,
      about: {
        [TUPLES_CHANGED]: (req: orgsTeamsOrgsV1.ListTeamMembersRequest) => [`team:${Number(req.teamId)}`],
        [ACCOUNTS_CHANGED]: membersOf,
      },
    },
    getTeamMember: {
      ...ORGS_TEAMS_ANSWER,
      about: { [TUPLES_CHANGED]: (req: orgsTeamsOrgsV1.GetTeamMemberRequest) => [`team:${Number(req.teamId)}`] },
    },
    listOrgs: ORGS_TEAMS_ANSWER,
    listUserOrgs: ORGS_TEAMS_ANSWER,
    getOrgPermissions: {
      ...ORGS_TEAMS_ANSWER,
      about: ofOrg((req: orgsTeamsOrgsV1.GetOrgPermissionsRequest) =>
        // Asked by login, the account is not known until answered: any account's change drops it.
        req.userId ? [account(req.userId)] : [ACCOUNTS_CHANGED],
      ),
    },
    // Teams of a user across organizations, with their custom roles (tuples): ORGS_TEAMS_ANSWER's notices.
    listUserTeams: ORGS_TEAMS_ANSWER,
  },
  orgTokens: {
    listSystemAdminTokens: {
      ...SIGNIN_ANSWER,
      ttlMs: (found) =>
        untilFirstUnix(
          (found as orgTokensV1.ListSystemAdminTokensResponse).tokens
            .filter((t) => t.hasRecentActivity)
            .map((t) => t.updatedAt + RECENT_ACTIVITY_MS / 1000),
        ),
    },
    listBusAccounts: ORGS_TEAMS_ANSWER,
  },
  claims: { oldestClaimable: ORGS_TEAMS_ANSWER, checkClaimable: ORGS_TEAMS_ANSWER },
  // The site's settings are kept whole by their own notice (site_settings, allowed_domains: changes.ts).
  siteSettings: { getBranding: SITE_SETTINGS, listAllowedDomains: SITE_SETTINGS, getRegistration: SITE_SETTINGS },
  avatars: { getAvatar: ORGS_TEAMS_ANSWER },
  serviceAccounts: {
    listServiceAccounts: ORGS_TEAMS_ANSWER,
    getServiceAccount: ORGS_TEAMS_ANSWER,
    listServiceAccountTokens: SIGNIN_ANSWER,
  },
} satisfies { [S in keyof OrgsTeamsClients]?: { [M in keyof OrgsTeamsClients[S]]?: KeptRead } };

/**
 * The manager's sync token, kept once its secret is gone: the read that shows the secret (and drops it) is asked alone,
 * never shared with a concurrent read, and not kept, so the secret reaches one answer only. Its replacement or deletion
 * is announced (ORGS_TEAMS_OTHER_CHANGED for the sync token, ACCOUNTS_CHANGED for its access token).
 */
export function keptSyncTokens<C extends Pick<OrgsTeamsClients['orgTokens'], 'getSyncToken'>>(
  client: C,
  keep: Pick<OrgsTeamsKeeping, 'reader' | 'ttlMs'> & { available?: () => boolean },
): { client: C; readModel: ReadModel } {
  const cache = new NoticeCache<orgTokensV1.ManagerApiToken>({ name: `${keep.reader}.sync-tokens`, ttlMs: keep.ttlMs, maxEntries: 10_000 });
  const kept: C = {
    ...client,
    getSyncToken: (req: orgTokensV1.OrgTokensRequest, opts?: CallOptions) =>
      keep.available && !keep.available()
        ? client.getSyncToken(req, opts)
        : cache.through(
            `${req.orgId}|${JSON.stringify(opts?.metadata ?? {})}`,
            () => client.getSyncToken(req, opts),
            { alone: true, keep: (token) => !token.secretAccessKey, tags: [org(req.orgId)] },
            opts?.arrivedAt,
          ),
  };
  // An organization's token: its organization's notices and the tuple notices naming it drop it; an account's change
  // (its access token's) and the other notice (the sync token itself) name no organization, so they drop every one.
  const everything = () => 'all' as const;
  const rules = [
    { subject: ORGS_CHANGED, stale: orgsNamed },
    { subject: TUPLES_CHANGED, stale: tupleOrgsNamed },
    { subject: ACCOUNTS_CHANGED, stale: everything },
    { subject: ORGS_TEAMS_OTHER_CHANGED, stale: everything },
  ];
  return { client: kept, readModel: following(cache, rules) };
}

/** The calls orgs-teams' read model answers. */
interface OrgsTeamsReads {
  identity: Pick<OrgsTeamsClients['identity'], 'authenticate' | 'getAccounts'>;
  organizations: Pick<OrgsTeamsClients['organizations'], 'getOrg' | 'getTeam' | 'listTeams' | 'searchTeams'>;
}

const accountTag = (id: number | string) => `account:${Number(id)}`;
const orgTag = (id: number | string) => `org:${Number(id)}`;
/** The tags a notice's names are found by in another cache (an organization is an account too; a caller's views). */
const retagged = (tags: string[] | 'all', from: string, to: string) => (tags === 'all' ? tags : tags.map((t) => t.replace(from, to)));
const both = (a: string[] | 'all', b: string[] | 'all'): string[] | 'all' => (a === 'all' || b === 'all' ? 'all' : [...a, ...b]);
/**
 * An organization view replaced by the row a notice brings when the row is newer and the organization as visible as
 * before (its answer is the same whoever asks, so one row serves every viewer's); dropped when its visibility changed,
 * since who may see it then changed. A row no newer leaves the view as it is.
 */
function viewsOfRows(notice: unknown): Map<string, (kept: orgsTeamsOrgsV1.Organization) => orgsTeamsOrgsV1.Organization | undefined> {
  const fresh = new Map<string, (kept: orgsTeamsOrgsV1.Organization) => orgsTeamsOrgsV1.Organization | undefined>();
  for (const [id, row] of orgRowsBrought(notice)) {
    const org = orgsTeamsOrgsV1.Organization.fromJSON(row);
    fresh.set(orgTag(id), (kept) => (org.version <= kept.version ? kept : org.visibility === kept.visibility ? org : undefined));
  }
  return fresh;
}

/**
 * orgs-teams' read model, as it defines it for the apps that read it. Its rules, written here by orgs-teams:
 * - **Who a token belongs to** (Authenticate), keyed by the token's SHA-256, never the token; unknown tokens are not
 *   kept. An account's change (a token deleted, the account disabled, demoted or removed) is announced
 *   (`identity.accounts.changed`) and drops its tokens.
 * - **Accounts by id** (GetAccounts: login, email, type; the kept ones answered here, only the others asked): an
 *   account's or an organization's change drops it (accounts and organizations share one id space).
 * - **An organization as a caller sees it** (GetOrg for a viewer): a change of its row (`identity.orgs.changed`
 *   without `only`) drops it, the viewer's account change drops the viewer's, and a private organization's views go
 *   with any change of who is in it too (the notice of any change of its teams or members, and authz's notice naming
 *   it): who is in it decides who sees it. A public or limited organization is seen whoever is in it.
 * - **A team without its roles** (GetTeam): a change of a team or of its organization is announced naming the
 *   organization; a change of who is in its teams alone (`only: 'members'`) leaves it.
 * - **An organization's lists of teams** (ListTeams, whole or one page; SearchTeams, by page and text): evicted by the
 *   organization's notice as a team is; they carry the teams' custom roles, which are authz's, so a tuple change of the
 *   organization drops them too. These are the only lists of teams kept anywhere: orgs-teams keeps none itself. A team with its
 *   roles (GetTeam withRoles) is asked afresh.
 * Either notice may name everything (`all`: a write that did not record what it changed), which drops all of it.
 * Misses are not kept. Each answer is served only after the reader's bus has caught up with the notices sent before
 * the request arrived (`CallOptions.arrivedAt`); nothing is kept while the bus is away.
 */
export function keptOrgsTeams<C extends OrgsTeamsReads>(clients: C, keep: OrgsTeamsKeeping): { clients: C; readModel: OrgsTeamsReadModel } {
  const cache = <V>(name: string, ttlMs = keep.ttlMs, maxEntries = 10_000) =>
    new NoticeCache<V>({ name: `${keep.reader}.${name}`, ttlMs, maxEntries });
  const tokens = cache<orgsTeamsV1.AuthenticateResponse>('tokens', keep.tokenTtlMs);
  const accounts = cache<orgsTeamsV1.User>('accounts');
  const orgViews = cache<orgsTeamsOrgsV1.Organization>('orgs');
  const teams = cache<orgsTeamsOrgsV1.Team>('teams');
  // Whole lists, pages and searches of an organization's teams.
  const teamLists = cache<orgsTeamsOrgsV1.ListTeamsResponse>('team-lists');
  const followed: [Pick<NoticeCache<unknown>, 'follow'>, NoticeRule[]][] = [
    [tokens, [{ subject: ACCOUNTS_CHANGED, stale: accountsNamed }]],
    [
      accounts,
      [
        { subject: ACCOUNTS_CHANGED, stale: accountsNamed },
        // An organization is an account too; a change of its teams or members alone leaves the account as it was.
        { subject: ORGS_CHANGED, stale: (n) => retagged(orgRowsNamed(n), 'org:', 'account:') },
      ],
    ],
    [
      orgViews,
      [
        // Its row (`org:`), and who is in it (`members:`), which only a private organization's views are kept under; an
        // organization whose new row the notice brings is replaced rather than dropped (`fresh`).
        {
          subject: ORGS_CHANGED,
          fresh: viewsOfRows,
          stale: (n) => besidesRowsBrought(both(orgRowsNamed(n), retagged(orgsNamed(n), 'org:', 'members:')), n),
        },
        { subject: TUPLES_CHANGED, stale: (n) => retagged(tupleOrgsNamed(n), 'org:', 'members:') },
        { subject: ACCOUNTS_CHANGED, stale: (n) => retagged(accountsNamed(n), 'account:', 'viewer:') },
      ],
    ],
    // A team (and the organization it shows) until its organization's row or teams change; not who is in it.
    [teams, [{ subject: ORGS_CHANGED, stale: orgTeamsNamed }]],
    [
      teamLists,
      [
        { subject: ORGS_CHANGED, stale: orgsNamed },
        { subject: TUPLES_CHANGED, stale: tupleOrgsNamed },
      ],
    ],
  ];
  const { identity, organizations } = clients;
  const since = (opts: CallOptions | undefined) => opts?.arrivedAt;
  const kept: C = {
    ...clients,
    identity: {
      ...identity,
      authenticate: (req: orgsTeamsV1.AuthenticateRequest, opts?: CallOptions) =>
        tokens.through(
          createHash('sha256').update(req.token).digest('hex'),
          () => identity.authenticate(req, opts),
          { keep: (answer) => answer.user !== undefined, tags: (answer) => [accountTag(answer.user!.id)] },
          since(opts),
        ),
      getAccounts: async (req: orgsTeamsV1.GetUsersRequest, opts?: CallOptions) => {
        const found = await accounts.throughMany(
          req.ids.map(String),
          async (missing) => new Map((await identity.getAccounts({ ids: missing.map(Number) }, opts)).users.map((u) => [String(u.id), u])),
          { tags: (user) => [accountTag(user.id)] },
          since(opts),
        );
        return { users: req.ids.flatMap((id) => found.get(String(id)) ?? []) } as orgsTeamsV1.GetUsersResponse;
      },
    },
    organizations: {
      ...organizations,
      getOrg: (req: orgsTeamsOrgsV1.GetOrgRequest, opts?: CallOptions) =>
        orgViews.through(
          `${req.viewerId}|${req.name.toLowerCase()}`,
          () => organizations.getOrg(req, opts),
          // Who may see a private organization is decided by who is in it; anyone (signed in, for a limited one) sees
          // the others, whoever is in them.
          { tags: (org) => [orgTag(org.id), `viewer:${req.viewerId}`, ...(org.visibility === 'private' ? [`members:${org.id}`] : [])] },
          since(opts),
        ),
      getTeam: (req: orgsTeamsOrgsV1.GetTeamRequest, opts?: CallOptions) =>
        // With its roles a team is authz's answer too, asked afresh (one row and one call to authz).
        req.withRoles
          ? organizations.getTeam(req, opts)
          : teams.through(
              `${req.teamId}|${req.orgId}`,
              () => organizations.getTeam(req, opts),
              { tags: (team) => [orgTag(team.organization?.id ?? 0)] },
              since(opts),
            ),
      listTeams: (req: orgsTeamsOrgsV1.ListTeamsRequest, opts?: CallOptions) =>
        teamLists.through(
          `list|${req.orgId}|${req.page?.page ?? 0}|${req.page?.limit ?? 0}`,
          () => organizations.listTeams(req, opts),
          { tags: [orgTag(req.orgId)] },
          since(opts),
        ),
      searchTeams: (req: orgsTeamsOrgsV1.SearchTeamsRequest, opts?: CallOptions) =>
        teamLists.through(
          `search|${JSON.stringify([req.orgId, req.page?.page ?? 0, req.page?.limit ?? 0, req.includeDesc, req.q])}`,
          () => organizations.searchTeams(req, opts),
          { tags: [orgTag(req.orgId)] },
          since(opts),
        ),
    },
  };
  return {
    clients: kept,
    readModel: {
      ...allOf(followed.map(([cache, rules]) => following(cache, rules))),
      forgetTokens: (accountIds) => (accountIds ? tokens.evict(accountIds.map(accountTag)) : tokens.clear()),
    },
  };
}

/**
 * Every read of orgs-teams a reader keeps (the gateway's `kept.orgsTeams`, KeptDoor): who a token belongs to, accounts,
 * organizations as a caller sees them, teams and lists of teams of its read model (keptOrgsTeams), a manager's sync
 * token (keptSyncTokens), and the other reads of ORGS_TEAMS_READS.
 */
export const ORGS_TEAMS_KEPT = {
  identity: {
    /** Who a token belongs to, by the token's SHA-256, until its account's notice. */
    authenticate: 'token',
    /** Accounts by id (login, email, type), the kept ones answered here and only the others asked. */
    getAccounts: 'accounts',
    ...ORGS_TEAMS_READS.identity,
  },
  organizations: {
    /** An organization as a caller sees it, by slug, until its row's or the caller's notice (a private one: its members' too). */
    getOrg: 'organization view',
    /** An organization's teams, whole or a page, until its or its tuples' notice. */
    listTeams: 'team list',
    /** An organization's teams found by text, as its lists. */
    searchTeams: 'team search',
    // GetTeam: without its roles kept by the read model until its organization's notice, with them as this rule says.
    ...ORGS_TEAMS_READS.organizations,
  },
  orgTokens: {
    /** A manager's sync token once its secret is gone, until its organization's notice or any account's. */
    getSyncToken: 'sync token',
    ...ORGS_TEAMS_READS.orgTokens,
  },
  claims: ORGS_TEAMS_READS.claims,
  siteSettings: ORGS_TEAMS_READS.siteSettings,
  avatars: ORGS_TEAMS_READS.avatars,
  serviceAccounts: ORGS_TEAMS_READS.serviceAccounts,
} as const;
