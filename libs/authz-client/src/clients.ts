import {
  ANY_TUPLE,
  DecisionCache,
  NoticeCache,
  TUPLES_CHANGED,
  allOf,
  decisionKey,
  following,
  keptServiceReads,
  tuplesNamed,
  type KeptRead,
  type ReadModel,
} from '@platform/bus';
import { authzRolesV1, authzV1 } from '@platform/proto';
import { backendState, createClients, type CallOptions, type ClientOptions, type PromiseClient } from '@platform/service-kit';

/** The calls authz's read model answers. */
interface AuthzReads {
  authz: Pick<AuthzClients['authz'], 'check' | 'checkPermission' | 'whoHasAccess'>;
  roles: Pick<AuthzClients['roles'], 'getRole'>;
}

/** authz's gRPC services, by the name its clients go by: what its clients and its test stand-ins are made from. */
export const AUTHZ_SERVICES = {
  authz: authzV1.AuthzServiceService,
  roles: authzRolesV1.RolesServiceService,
} as const;

/** authz's services as another app calls them. */
export interface AuthzClients {
  /** Checks, tuples, the permission catalog. */
  authz: PromiseClient<typeof authzV1.AuthzServiceService>;
  /** Custom roles and allowed permissions. */
  roles: PromiseClient<typeof authzRolesV1.RolesServiceService>;
}

/** What a reader keeps of authz's answers, and how long at most (0 keeps nothing). */
export interface AuthzKeeping {
  /** Check answers (AUTHZ_DECISION_CACHE_TTL_MS, AUTHZ_DECISION_CACHE_SIZE). */
  decisions: { ttlMs: number; maxEntries: number };
  /** Custom roles read by id. */
  roles: { ttlMs: number; maxEntries?: number };
  /**
   * Who-has-access answers, by object: large and few (one per object an owner looks at), so by default as long as
   * the decisions and a hundredth as many.
   */
  access?: { ttlMs: number; maxEntries: number };
  /** Names the caches in the metrics (`<reader>.decisions`, `<reader>.who-has-access`, `<reader>.roles`). */
  reader: string;
}

/**
 * authz's clients, with what the reader keeps of their answers (`keep`): the read model authz defines for the apps
 * that ask it, the one place its answers are kept (authz itself keeps none: its engine holds the tuples in memory).
 * Its one rule, written here by authz: every write method of authz sends `authz.tuples.changed` once it is over (a
 * role's rename and description too), naming what it touched; an answer is kept under what authz read to answer it
 * (`dependsOn`: one tuple changes answers about objects it does not name, but never an answer that did not read it),
 * and dropped by a notice naming any of that. Kept are checks without contextual tuples or a
 * condition context (those answer for one request only), who-has-access answers (never past the earliest end of a
 * time-bound grant they show) and custom roles read by id (misses are not kept). Each answer is served only after the
 * reader's bus has caught up with every notice sent before the request arrived (`CallOptions.arrivedAt`), and nothing
 * is kept while the bus is away.
 */
export function authzClients(address: string, opts: ClientOptions, keep?: AuthzKeeping): { clients: AuthzClients; readModel: ReadModel } {
  const clients: AuthzClients = createClients(AUTHZ_SERVICES, address, opts);
  if (!keep) return { clients, readModel: allOf([]) };
  const kept = keptAuthz(clients, keep);
  const reads = keptServiceReads(kept.clients, authzReads(keep.decisions.ttlMs), {
    name: `${keep.reader}.authz`,
    ttlMs: keep.roles.ttlMs,
    available: () => backendState(opts.name).available,
  });
  return { clients: reads.clients, readModel: allOf([kept.readModel, reads.readModel]) };
}

/**
 * authz's other reads a reader keeps: the permission catalog, custom roles listed, a role's principals, the permissions
 * a user holds on objects, the teams' roles and whether a user may give a grant. Those of one organization are dropped
 * by a tuple notice naming it (the organization of every object a write touched: a team's members and a role's
 * assignees are always of the team's or role's own organization, which every writer of the platform ensures); the
 * teams' roles by a notice naming a team's tuples as a user (`@team:3`: its role assignments); whether a user may give a
 * grant by a notice naming what authz read to answer it (`dependsOn`); the rest by every tuple notice. Those that
 * follow from the tuples (all but the catalog) are, like a kept check, kept no longer than a check is
 * (`decisionsTtlMs`): a time-bound grant ends with no write, and these answers do not say when.
 */
export function authzReads(decisionsTtlMs: number) {
  const ofOrg = (about: (request: never, answer: never) => readonly string[]): KeptRead => ({
    stale: [TUPLES_CHANGED],
    ttlMs: () => decisionsTtlMs,
    about: { [TUPLES_CHANGED]: about },
  });
  const org = (id: number | string) => `org:${Number(id)}`;
  return {
    authz: { permissionCatalog: { stale: [TUPLES_CHANGED] } },
    roles: {
      listRoles: ofOrg((req: authzRolesV1.ListRolesRequest) => [org(req.orgId)]),
      listPrincipals: ofOrg((req: authzRolesV1.ListPrincipalsRequest) => [org(req.orgId)]),
      // Under what authz read to answer it; an authz that does not say (the version before): the organization.
      checkGrant: ofOrg((req: authzRolesV1.CheckGrantRequest, answer: authzRolesV1.CheckGrantResponse) =>
        answer.dependsOn?.length ? answer.dependsOn : [org(req.orgId)],
      ),
      // An organization's permissions by its organization; those on other objects by any tuple notice.
      allowedPermissions: ofOrg((req: authzRolesV1.AllowedPermissionsRequest) =>
        req.objects.map((o) => (o.objectType === 'organization' ? org(o.objectId) : ANY_TUPLE)),
      ),
      listTeamRoles: ofOrg((req: authzRolesV1.ListTeamRolesRequest) => req.teamIds.map((id) => `@team:${Number(id)}`)),
    },
  } satisfies { [S in keyof AuthzClients]?: { [M in keyof AuthzClients[S]]?: KeptRead } };
}

/** authz's clients answering from what `keep` says to keep (see authzClients); any object with their methods will do. */
export function keptAuthz<C extends AuthzReads>(clients: C, keep: AuthzKeeping): { clients: C; readModel: ReadModel } {
  const { authz, roles } = clients;
  const decisions = new DecisionCache<Decision>({ name: `${keep.reader}.decisions`, ...keep.decisions });
  const access = new DecisionCache<authzV1.WhoHasAccessResponse>({
    name: `${keep.reader}.who-has-access`,
    ...(keep.access ?? { ttlMs: keep.decisions.ttlMs, maxEntries: Math.ceil(keep.decisions.maxEntries / 100) }),
  });
  const keptRoles = new NoticeCache<authzRolesV1.Role>({
    name: `${keep.reader}.roles`,
    ttlMs: keep.roles.ttlMs,
    maxEntries: keep.roles.maxEntries ?? 10_000,
  });
  const byTuples = [{ subject: TUPLES_CHANGED, stale: tuplesNamed }];
  return {
    clients: {
      ...clients,
      authz: withKeptAccess(withKeptDecisions(authz, decisions), access),
      roles: withKeptRoles(roles, keptRoles),
    },
    readModel: allOf([decisions, access, keptRoles].map((cache) => following(cache, byTuples))),
  };
}

type Decision = authzV1.CheckResponse;

/**
 * The tags an answer of authz is kept under: what it was read from, as authz says (`dependsOn`), or, when it does not
 * say (an OpenFGA server answered), the tag every tuple notice names.
 */
const readFrom = (dependsOn: readonly string[] | undefined): readonly string[] => (dependsOn?.length ? dependsOn : [ANY_TUPLE]);

/** The request's arrival, which the reader's calls carry, for the fence (Bus.caughtUp). */
const arrivedAt = (opts: CallOptions | undefined) => opts?.arrivedAt;

/** The client with CheckPermission and Check answered from the decisions kept, when they may be. */
export function withKeptDecisions<C extends Pick<AuthzClients['authz'], 'check' | 'checkPermission'>>(
  client: C,
  cache: DecisionCache<Decision>,
): C {
  const kept = (key: string, ask: () => Promise<Decision>, opts: CallOptions | undefined): Promise<Decision> =>
    cache.through(key, ask, { tags: (answer) => readFrom(answer.dependsOn) }, arrivedAt(opts));
  return {
    ...client,
    checkPermission: (req: authzV1.CheckPermissionRequest, opts?: CallOptions) =>
      // A permission name is resolved through authz's fixed table: the name stands for what it resolves to.
      kept(
        decisionKey(`user:${req.userId}`, `permission ${req.permission}`, String(req.objectId)),
        () => client.checkPermission(req, opts),
        opts,
      ),
    check: (req: authzV1.CheckRequest, opts?: CallOptions) =>
      // A check with contextual tuples or a condition context answers for that request only.
      req.contextualTuples.length > 0 || req.contextJson || !req.tuple
        ? client.check(req, opts)
        : kept(decisionKey(req.tuple.user, req.tuple.relation, req.tuple.object), () => client.check(req, opts), opts),
  };
}

/**
 * The client with WhoHasAccess answered from the answers kept, by object. An answer showing a time-bound grant is kept
 * no longer than the earliest grant's end (`until`): an ended grant gives nothing, and authz shows every end its answer
 * depends on.
 */
function withKeptAccess<C extends Pick<AuthzClients['authz'], 'whoHasAccess'>>(
  client: C,
  cache: DecisionCache<authzV1.WhoHasAccessResponse>,
): C {
  return {
    ...client,
    whoHasAccess: (req: authzV1.WhoHasAccessRequest, opts?: CallOptions) =>
      cache.through(
        req.owner ? `${req.object} owned by ${req.owner}` : req.object,
        () => client.whoHasAccess(req, opts),
        { ttlMs: untilEarliestEnd, tags: (answer) => readFrom(answer.dependsOn) },
        arrivedAt(opts),
      ),
  };
}

/** How long from now until the earliest time-bound grant an answer shows ends; undefined when it shows none. */
function untilEarliestEnd(answer: authzV1.WhoHasAccessResponse): number | undefined {
  const now = Date.now();
  let earliest: number | undefined;
  for (const permission of answer.permissions)
    for (const user of permission.users)
      for (const path of user.paths) {
        const ends = path.until ? Date.parse(path.until) : NaN;
        if (!Number.isNaN(ends) && (earliest === undefined || ends < earliest)) earliest = ends;
      }
  return earliest === undefined ? undefined : Math.max(0, earliest - now);
}

/** The client with GetRole answered from the roles kept. */
function withKeptRoles<C extends Pick<AuthzClients['roles'], 'getRole'>>(client: C, cache: NoticeCache<authzRolesV1.Role>): C {
  return {
    ...client,
    getRole: (req: authzRolesV1.GetRoleRequest, opts?: CallOptions) =>
      // A role's row changes are named as its parent tuple is (`role:<id>`), as are the tuples on it.
      cache.through(`${req.orgId}|${req.id}`, () => client.getRole(req, opts), { tags: [`role:${req.id}`] }, arrivedAt(opts)),
  };
}

/**
 * Every read of authz a reader keeps (the gateway's `kept.authz`, KeptDoor): the decisions, who-has-access answers and
 * roles of its read model (keptAuthz), and the other reads of authzReads.
 */
export const AUTHZ_KEPT = {
  authz: {
    /** A check without contextual tuples or a condition context, kept under what authz read to answer it. */
    check: 'decision',
    /** A permission of the spec checked, kept as a check is. */
    checkPermission: 'decision',
    /** Who holds each permission of an object, kept under what authz read, never past a grant's end. */
    whoHasAccess: 'who has access',
    ...authzReads(0).authz,
  },
  roles: {
    /** A custom role by id, kept until a notice names it. */
    getRole: 'role',
    ...authzReads(0).roles,
  },
} as const;
