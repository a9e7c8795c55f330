import * as gatewayV1 from './gen/platformadmin/gateway/v1/gateway';
import * as authzV1 from './gen/platformadmin/authz/v1/authz';
import * as authzRolesV1 from './gen/platformadmin/authz/v1/roles';
import * as orgsTeamsV1 from './gen/platformadmin/orgsteams/v1/orgsteams';
import * as orgsTeamsOrgsV1 from './gen/platformadmin/orgsteams/v1/orgs';
import * as orgsTeamsSettingsV1 from './gen/platformadmin/orgsteams/v1/settings';
import * as orgsTeamsAuditV1 from './gen/platformadmin/orgsteams/v1/audit';
import * as orgsTeamsAvatarsV1 from './gen/platformadmin/orgsteams/v1/avatars';
import * as orgTokensV1 from './gen/platformadmin/orgsteams/v1/org_tokens';
import * as orgClaimsV1 from './gen/platformadmin/orgsteams/v1/claims';
import * as serviceAccountsV1 from './gen/platformadmin/orgsteams/v1/service_accounts';
import * as contractsLicensingV1 from './gen/platformadmin/contractslicensing/v1/contractslicensing';
import * as contractsV1 from './gen/platformadmin/contractslicensing/v1/contracts';
import * as licensingV1 from './gen/platformadmin/contractslicensing/v1/licensing';
import * as notificationsV1 from './gen/platformadmin/contractslicensing/v1/notifications';
import * as billingDashboardV1 from './gen/platformadmin/billingdashboard/v1/billingdashboard';
import * as outagesV1 from './gen/platformadmin/billingdashboard/v1/outages';
import * as licensedV1 from './gen/platformadmin/billingdashboard/v1/licensed';
import * as summaryV1 from './gen/platformadmin/billingdashboard/v1/summary';
import * as usageReportV1 from './gen/platformadmin/billingdashboard/v1/usage_report';
import * as eventsV1 from './gen/platformadmin/billingdashboard/v1/events';
import * as metricsproxyV1 from './gen/platformadmin/metricsproxy/v1/metricsproxy';
import * as marketplaceListenerV1 from './gen/platformadmin/marketplacelistener/v1/marketplacelistener';
import * as clustersV1 from './gen/platformadmin/clusters/v1/clusters';
import * as clusterSetsV1 from './gen/platformadmin/clusters/v1/cluster_sets';
import * as featureSetsV1 from './gen/platformadmin/clusters/v1/feature_sets';
import * as clientOrgsV1 from './gen/platformadmin/clusters/v1/client_orgs';
import { PERMISSION_OBJECT_TYPES } from './permissions';
import { userAsSeenBy } from './user-visibility';

/**
 * Who may call each gRPC method, declared once for every method of every service, as a REST route declares its
 * requirements on its row. The service kit enforces it on every call, before any handler runs
 * (libs/service-kit grpc-server.ts); docs/grpc.md lists it for the teams who call the platform.
 *
 * - `INTERNAL`: only the platform's own apps (their credential: a short-lived token signed with the release's
 *   key, or a call inside one process). Everything that writes another service's data, or reads data no outside
 *   caller needs, is internal. A service account calling one is refused with PERMISSION_DENIED.
 * - `ANY_CALLER`: any authenticated caller: a platform app or a service account (versions, the permission
 *   catalog, the license CA and its revocation list, license verification — nothing a caller could not learn
 *   otherwise).
 * - `publicMethod(...)`: platform apps, and service accounts authorized like a user: the function names the
 *   relations the account must hold (asked of authz as `user:<account id>`), and may rewrite the request so it is
 *   answered as the account may see it (a `viewer_id` becomes the account's own id), and the answer (users as
 *   userAsSeenBy shows them: others' e-mail addresses and account flags hidden).
 *
 * A method missing here does not compile (each service's table is typed by its generated definition), and a
 * test fails when a served service has no table.
 */

/** The calling service account, as a public method's policy sees it. */
export interface CallingAccount {
  id: number;
  isAdmin: boolean;
}

/** One relation the calling account must hold: `user:<account> <relation> <object>`. */
export interface AccessQuestion {
  relation: string;
  object: string;
}

/** Asks authz which of the relations the calling account holds (`user:<account>`), in the order asked. */
export type AskAccount = (questions: AccessQuestion[]) => Promise<boolean[]>;

/** What a public method asks of a calling account, and the request as it is then served. */
export interface AccessRequirement<Req, Res = any> {
  questions: AccessQuestion[];
  /** The request as the account may ask it (a viewer field set to the account); absent: as sent. */
  request?: Req;
  /**
   * The answer as the account may see it (others' e-mail addresses and account flags hidden; a list cut to the objects it sees, which
   * it asks with `ask`); absent: as served.
   */
  answer?: (response: Res, ask: AskAccount) => Res | Promise<Res>;
  /** Why the account may not ask this at all (a question about an object it could never see). */
  refused?: string;
}

export type MethodPolicy<Req = any, Res = any> =
  | { access: 'internal' }
  | { access: 'any-caller' }
  | { access: 'public'; authorize(request: Req, account: CallingAccount): AccessRequirement<Req, Res> };

export const INTERNAL: MethodPolicy = { access: 'internal' };
export const ANY_CALLER: MethodPolicy = { access: 'any-caller' };

/** A public method: what the calling account must hold to call it with this request. */
export function publicMethod<Req, Res = any>(
  authorize: (request: Req, account: CallingAccount) => AccessRequirement<Req, Res>,
): MethodPolicy<Req, Res> {
  return { access: 'public', authorize };
}

type RequestOf<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type ResponseOf<M> = M extends { responseDeserialize: (b: Buffer) => infer R } ? R : never;
type Definition = Record<string, { path: string; requestDeserialize: (b: Buffer) => unknown; responseDeserialize: (b: Buffer) => unknown }>;

/** One service's table: a policy for every method of its generated definition, by method path. */
export interface ServicePolicies {
  service: string;
  byPath: Map<string, MethodPolicy>;
}

function policiesOf<D extends Definition>(
  definition: D,
  table: { [K in keyof D]: MethodPolicy<RequestOf<D[K]>, ResponseOf<D[K]>> },
): ServicePolicies {
  const byPath = new Map<string, MethodPolicy>();
  for (const [key, method] of Object.entries(definition)) byPath.set(method.path, table[key as keyof D]);
  const first = Object.values(definition)[0];
  return { service: first.path.split('/')[1], byPath };
}

/**
 * The relation that lets an account see an object of each type, so that it may ask authorization questions
 * about it on someone else's behalf. Types not listed here (users, tokens) it may ask about only for itself.
 */
const SEES: Record<string, string> = {
  site: 'admin',
  organization: 'access',
  team: 'view',
  role: 'view',
  cluster: 'view',
  contract: 'view',
  robot_ac: 'view',
};

/** The user the question is about is the calling account itself. */
const isSelf = (user: string, account: CallingAccount) => user === `user:${account.id}`;

/**
 * The object a tuple's user side names, when it names one: `team:3#member` and `organization:5` (an object standing
 * as a user, as an owner of a cluster) name `team:3` and `organization:5`; a person (`user:7`, `user:*`) names none.
 */
function objectOfUser(user: string): string | undefined {
  const hash = user.indexOf('#');
  const object = hash < 0 ? user : user.slice(0, hash);
  return hash < 0 && object.startsWith('user:') ? undefined : object;
}

/** A relationship a question adds for its own answer (a contextual tuple): both its sides, and its condition's values. */
interface AddedTuple {
  user: string;
  object: string;
  condition?: { contextJson: string };
}

/**
 * One authorization question: about `user` on `object`, with what it adds (contextual tuples, a context). A list
 * question leaves out what it lists: ListObjects the object (its answer is cut to the objects the account sees),
 * ListUsers and Expand the user (any user: the object must be one the account sees).
 */
interface Question {
  user?: string;
  object?: string;
  contextualTuples?: AddedTuple[];
  contextJson?: string;
}

/** A text value that names an object of a type the model has (`team:3`, `organization:5#member`). */
const OBJECT_NAME = /^([a-z_]+):[^\s#:]+(#[a-z_]+)?$/;

/**
 * The objects named by the values of a condition's parameters (a JSON object): the model's conditions compare values
 * (timestamps today), but a value that names one of its objects is a claim about it like a contextual tuple's.
 * Malformed JSON names nothing here: authz refuses it as an invalid argument.
 */
function objectsInContext(json: string | undefined): string[] {
  if (!json) return [];
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return [];
  }
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      const m = OBJECT_NAME.exec(v);
      if (m && (m[1] in SEES || m[1] === 'user')) {
        const object = objectOfUser(v);
        if (object) found.push(object);
      }
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return found;
}

/**
 * What an account must hold to learn whether users hold relations on objects: nothing about itself; otherwise it
 * must see each object, and each object the question's user names (a userset, an organization as owner). What a
 * question adds for its own answer is held to the same rule, about itself too: each object and userset of its
 * contextual tuples, and each object a condition's value names, must be one the account sees; otherwise the
 * account could put another organization's private team into its own organization for one answer and learn who is
 * in it. An object of a type it can never see refuses the question.
 */
function toAsk<Req>(asked: Question[], account: CallingAccount): AccessRequirement<Req> {
  const questions = new Map<string, AccessQuestion>();
  let refused: string | undefined;
  const sees = (object: string, why: string) => {
    const relation = SEES[object.split(':')[0]];
    if (!relation) refused ??= `a service account may ask about ${object} only for itself${why}`;
    else questions.set(`${relation} ${object}`, { relation, object });
  };
  for (const q of asked) {
    if (q.user === undefined || !isSelf(q.user, account)) {
      if (q.object !== undefined) sees(q.object, '');
      const named = q.user === undefined ? undefined : objectOfUser(q.user);
      if (named) sees(named, '');
    }
    for (const t of q.contextualTuples ?? []) {
      const why = ` (a contextual tuple names it)`;
      sees(t.object, why);
      const named = objectOfUser(t.user);
      if (named) sees(named, why);
      for (const o of objectsInContext(t.condition?.contextJson)) sees(o, ' (a condition names it)');
    }
    for (const o of objectsInContext(q.contextJson)) sees(o, ' (the context names it)');
  }
  return refused ? { questions: [], refused } : { questions: [...questions.values()] };
}

/** A check as the question it asks. */
const questionOf = (c: authzV1.CheckRequest): Question[] =>
  c.tuple ? [{ user: c.tuple.user, object: c.tuple.object, contextualTuples: c.contextualTuples, contextJson: c.contextJson }] : [];

/** The object a permission name is checked on (`view:team` with id 7 -> `team:7`). */
function permissionObject(permission: string, objectId: number): string {
  const type = (PERMISSION_OBJECT_TYPES as Record<string, string>)[permission] ?? 'unknown';
  return type === 'site' ? 'site:platform' : `${type}:${objectId}`;
}

const byViewer = <Req extends { viewerId: number }>(questions: (r: Req) => AccessQuestion[]) =>
  publicMethod<Req>((request, account) => ({ questions: questions(request), request: { ...request, viewerId: account.id } }));

/** The longest page a service account is answered, and what it gets when it asks for none (the platform's own apps may read whole lists). */
export const SERVICE_ACCOUNT_PAGE = { default: 50, max: 200 };

/** A list read of a service account: at most one page of SERVICE_ACCOUNT_PAGE, as an answer stays well under the message limit. */
function paged<Req extends { page?: { page: number; limit: number } }>(request: Req): Req {
  const limit = Math.min(request.page?.limit || SERVICE_ACCOUNT_PAGE.default, SERVICE_ACCOUNT_PAGE.max);
  return { ...request, page: { page: Math.max(1, request.page?.page ?? 1), limit } };
}

const check = publicMethod<authzV1.CheckRequest>((r, account) => toAsk(questionOf(r), account));

/** The type of an object (`organization:5`: `organization`). */
const typeOf = (object: string) => object.slice(0, Math.max(0, object.indexOf(':')));

/**
 * Which of the objects the account sees (SEES: `access` on an organization, `view` on a team, ...), asked all at once.
 * An object of a type it can never see (a user, a token), or a wildcard (`team:*`, no one object), is not seen.
 */
async function seenOf(objects: Iterable<string>, ask: AskAccount): Promise<Set<string>> {
  const asked = [...new Set(objects)].filter((o) => SEES[typeOf(o)] && !o.endsWith(':*'));
  const held = await ask(asked.map((object) => ({ relation: SEES[typeOf(object)], object })));
  return new Set(asked.filter((_, i) => held[i]));
}

/** Users of an answer kept when Check would answer about each: a person, or a userset or object the account sees. */
async function usersSeen(users: string[], ask: AskAccount): Promise<string[]> {
  const seen = await seenOf(
    users.map(objectOfUser).filter((o): o is string => o !== undefined),
    ask,
  );
  return users.filter((u) => {
    const named = objectOfUser(u);
    return named === undefined || seen.has(named);
  });
}

/**
 * ListObjects as the Checks it answers at once (`Check{user, relation, O}` for every object O of the type), held to
 * Check's rule: about itself, every object (and what the request adds, as a Check's); about anyone else, the user's
 * userset or object must be one the account sees, the type one it can see, and the answer is cut to the objects it
 * sees, those a Check would have answered. It learns nothing of the others, not even that they exist.
 */
const listObjects = publicMethod<authzV1.ListObjectsRequest, authzV1.ListObjectsResponse>((r, account) => {
  const required = toAsk<authzV1.ListObjectsRequest>(
    [{ user: r.user, contextualTuples: r.contextualTuples, contextJson: r.contextJson }],
    account,
  );
  if (required.refused || isSelf(r.user, account)) return required;
  if (!SEES[r.type]) return { questions: [], refused: `a service account may list objects of type ${r.type} only for itself` };
  return {
    ...required,
    answer: async (res, ask) => {
      const seen = await seenOf(res.objects, ask);
      return { ...res, objects: res.objects.filter((o) => seen.has(o)) };
    },
  };
});

/**
 * ListUsers as the Checks it answers at once (`Check{U, relation, object}` for every user U): the object must be one
 * the account sees (a Check about someone else needs it), so must what the request adds; usersets and objects
 * standing as users in the answer are kept only when the account sees them too (`team:3#member` a Check would have
 * refused is left out), people are listed.
 */
const listUsers = publicMethod<authzV1.ListUsersRequest, authzV1.ListUsersResponse>((r, account) => ({
  ...toAsk<authzV1.ListUsersRequest>([{ object: r.object, contextualTuples: r.contextualTuples, contextJson: r.contextJson }], account),
  answer: async (res, ask) => ({ ...res, users: await usersSeen(res.users, ask) }),
}));

/**
 * ReadTuples as the ListUsers of stored tuples: the tuples of one object, which the account must see (and the object
 * the filter's user names, as a Check's), unless the filter asks about the account itself; tuples whose user side names
 * a userset or object it does not see are left out, as ListUsers leaves them out. A read without an object, or of a
 * whole type (`team:`), is refused: it would read every tenant's tuples to cut them.
 */
const readTuples = publicMethod<authzV1.ReadTuplesRequest, authzV1.ReadTuplesResponse>((r, account) => {
  if (!r.object || r.object.endsWith(':'))
    return { questions: [], refused: 'a service account reads the tuples of one object it names (type:id)' };
  return {
    ...toAsk<authzV1.ReadTuplesRequest>([{ user: r.user || undefined, object: r.object }], account),
    answer: async (res, ask) => {
      const kept = new Set(await usersSeen([...new Set(res.tuples.map((t) => t.user))], ask));
      return { ...res, tuples: res.tuples.filter((t) => kept.has(t.user)) };
    },
  };
});

type TreeNode = authzV1.UsersetTree_Node;

/** Every object a userset tree names besides its own (the users of its leaves, the parents of a tuple to userset). */
function namedIn(node: TreeNode | undefined, out: string[] = []): string[] {
  const v = node?.value;
  if (!v) return out;
  if (v.$case === 'union' || v.$case === 'intersection') v.value.nodes.forEach((n) => namedIn(n, out));
  else if (v.$case === 'difference') [v.value.base, v.value.subtract].forEach((n) => namedIn(n, out));
  else {
    const leaf = v.value.value;
    if (leaf?.$case === 'users') out.push(...leaf.value.users.map(objectOfUser).filter((o): o is string => o !== undefined));
    else if (leaf?.$case === 'tupleToUserset') out.push(...leaf.value.computed.map((c) => c.userset.split('#')[0]));
    else if (leaf?.$case === 'computed') out.push(leaf.value.userset.split('#')[0]);
  }
  return out;
}

/** The tree with what names an object outside `seen` left out (a person, `user:7`, is always kept). */
function treeSeen(node: TreeNode | undefined, seen: Set<string>): TreeNode | undefined {
  const v = node?.value;
  if (!node || !v) return node;
  if (v.$case === 'union' || v.$case === 'intersection')
    return { ...node, value: { $case: v.$case, value: { nodes: v.value.nodes.map((n) => treeSeen(n, seen)!) } } };
  if (v.$case === 'difference')
    return {
      ...node,
      value: { $case: 'difference', value: { base: treeSeen(v.value.base, seen), subtract: treeSeen(v.value.subtract, seen) } },
    };
  const leaf = v.value.value;
  const kept = (user: string) => {
    const named = objectOfUser(user);
    return named === undefined || seen.has(named);
  };
  if (leaf?.$case === 'users')
    return { ...node, value: { $case: 'leaf', value: { value: { $case: 'users', value: { users: leaf.value.users.filter(kept) } } } } };
  if (leaf?.$case === 'tupleToUserset') {
    const computed = leaf.value.computed.filter((c) => seen.has(c.userset.split('#')[0]));
    return { ...node, value: { $case: 'leaf', value: { value: { $case: 'tupleToUserset', value: { ...leaf.value, computed } } } } };
  }
  return node;
}

/**
 * Expand as the Checks its tree stands for: the object must be one the account sees (and what the request adds), and
 * the tree keeps only the usersets and parents the account sees, as ListUsers' answer does.
 */
const expand = publicMethod<authzV1.ExpandRequest, authzV1.ExpandResponse>((r, account) => ({
  ...toAsk<authzV1.ExpandRequest>([{ object: r.object, contextualTuples: r.contextualTuples }], account),
  answer: async (res, ask) => {
    const seen = await seenOf(namedIn(res.tree?.root), ask);
    seen.add(r.object);
    return { ...res, tree: res.tree && { ...res.tree, root: treeSeen(res.tree.root, seen) } };
  },
}));

/** A list of users answered to a service account as it may see them (userAsSeenBy: others' e-mail addresses and account flags hidden). */
const membersAsSeenBy =
  <Res extends { members: orgsTeamsV1.User[] }>(account: CallingAccount) =>
  (response: Res): Res => ({ ...response, members: response.members.map((u) => userAsSeenBy(u, account)) });

/** Every method of every service the platform serves. */
export const METHOD_POLICIES: ServicePolicies[] = [
  policiesOf(serviceAccountsV1.ServiceAccountsServiceService, {
    createServiceAccount: INTERNAL,
    listServiceAccounts: INTERNAL,
    getServiceAccount: INTERNAL,
    editServiceAccount: INTERNAL,
    deleteServiceAccount: INTERNAL,
    createServiceAccountToken: INTERNAL,
    listServiceAccountTokens: INTERNAL,
    deleteServiceAccountToken: INTERNAL,
  }),
  policiesOf(authzRolesV1.RolesServiceService, {
    getVersion: ANY_CALLER,
    createRole: INTERNAL,
    getRole: INTERNAL,
    listRoles: INTERNAL,
    updateRole: INTERNAL,
    deleteRole: INTERNAL,
    listPrincipals: INTERNAL,
    allowedPermissions: publicMethod<authzRolesV1.AllowedPermissionsRequest>((r, account) =>
      toAsk(
        r.objects.map((o) => ({ user: `user:${r.userId}`, object: `${o.objectType}:${o.objectId}` })),
        account,
      ),
    ),
    assignTeamRoles: INTERNAL,
    listTeamRoles: INTERNAL,
    deleteOrgRoles: INTERNAL,
    checkGrant: INTERNAL,
  }),
  policiesOf(authzV1.AuthzServiceService, {
    getVersion: ANY_CALLER,
    check: check,
    batchCheck: publicMethod<authzV1.BatchCheckRequest>((r, account) => toAsk(r.checks.flatMap(questionOf), account)),
    checkPermission: publicMethod<authzV1.CheckPermissionRequest>((r, account) =>
      toAsk([{ user: `user:${r.userId}`, object: permissionObject(r.permission, r.objectId) }], account),
    ),
    listRelations: publicMethod<authzV1.ListRelationsRequest>((r, account) => toAsk([{ user: r.user, object: r.object }], account)),
    writeTuples: INTERNAL,
    readTuples: readTuples,
    permissionCatalog: ANY_CALLER,
    listObjects: listObjects,
    listUsers: listUsers,
    expand: expand,
    // Answers about other users without authorizing the caller: the gateway's route rows do that.
    whoHasAccess: INTERNAL,
    // The store's and model's ids and the model are no secret: the model is the platform's published one.
    describeStore: ANY_CALLER,
  }),
  policiesOf(billingDashboardV1.BillingDashboardServiceService, {
    getVersion: ANY_CALLER,
    getUsage: INTERNAL,
  }),
  policiesOf(clientOrgsV1.ClientOrgsServiceService, {
    provisionClientOrg: INTERNAL,
    createClientOrg: INTERNAL,
    getClientOrg: INTERNAL,
    listClientOrgs: INTERNAL,
    status: INTERNAL,
    addCluster: INTERNAL,
    removeCluster: INTERNAL,
    deleteClientOrg: INTERNAL,
  }),
  policiesOf(clusterSetsV1.ClusterSetsServiceService, {
    listClusterSets: INTERNAL,
    createClusterSet: INTERNAL,
    deleteClusterSet: INTERNAL,
    addClusters: INTERNAL,
    removeClusters: INTERNAL,
    listMembers: INTERNAL,
    listAddable: INTERNAL,
    listManagedClusters: INTERNAL,
    listSetNames: INTERNAL,
    authInfo: INTERNAL,
    boundNamespaces: INTERNAL,
    bindNamespace: INTERNAL,
    unbindNamespace: INTERNAL,
  }),
  policiesOf(clustersV1.ClustersServiceService, {
    getVersion: ANY_CALLER,
    createHub: INTERNAL,
    checkNewHub: INTERNAL,
    enrollHub: INTERNAL,
    listHubs: INTERNAL,
    listOwnerClusters: INTERNAL,
    getHub: INTERNAL,
    getCluster: INTERNAL,
    getClusters: INTERNAL,
    listSpokes: INTERNAL,
    getSpoke: INTERNAL,
    listNamespaces: INTERNAL,
    setUserConnection: INTERNAL,
  }),
  policiesOf(contractsLicensingV1.ContractsLicensingServiceService, {
    getVersion: ANY_CALLER,
  }),
  policiesOf(contractsV1.ContractsServiceService, {
    createContracts: INTERNAL,
    listContracts: INTERNAL,
    getContract: INTERNAL,
    updateContract: INTERNAL,
    deleteContract: INTERNAL,
    extendContract: INTERNAL,
    revokeContract: INTERNAL,
    getDocument: INTERNAL,
    listAudit: INTERNAL,
    getQuotaUsage: INTERNAL,
    listContractClusters: INTERNAL,
    bindClusters: INTERNAL,
    importableClusters: INTERNAL,
    unbindCluster: INTERNAL,
    renameContractCluster: INTERNAL,
    setContractClusterTags: INTERNAL,
    clusterStatus: INTERNAL,
    batchClusterStatus: INTERNAL,
    availableProducts: INTERNAL,
    assignCluster: INTERNAL,
    associatedClusters: INTERNAL,
    setPreferences: INTERNAL,
    countClusterContracts: INTERNAL,
  }),
  policiesOf(notificationsV1.NotificationsServiceService, {
    listWebhookEndpoints: INTERNAL,
    createWebhookEndpoint: INTERNAL,
    setWebhookEndpointEnabled: INTERNAL,
    deleteWebhookEndpoint: INTERNAL,
    listWebhookDeliveries: INTERNAL,
    listNoticeMails: INTERNAL,
    sendMail: INTERNAL,
  }),
  policiesOf(eventsV1.ResourceEventsServiceService, {
    getResourceHistory: INTERNAL,
    listResourceEvents: INTERNAL,
    getEventsReport: INTERNAL,
    getRawEvent: INTERNAL,
  }),
  policiesOf(featureSetsV1.FeatureSetsServiceService, {
    listFeatureSets: INTERNAL,
    install: INTERNAL,
    disable: INTERNAL,
    updateCluster: INTERNAL,
    syncStatus: INTERNAL,
    autoUpdateCheck: INTERNAL,
    autoUpdate: INTERNAL,
  }),
  policiesOf(gatewayV1.GatewayServiceService, {
    getVersion: ANY_CALLER,
  }),
  policiesOf(licensedV1.LicensedUsageServiceService, {
    listLicensedUsers: INTERNAL,
    listUserClusters: INTERNAL,
    listClusterLicenses: INTERNAL,
    listLicensedProducts: INTERNAL,
    listActiveClusterLicenses: INTERNAL,
  }),
  policiesOf(licensingV1.LicensingServiceService, {
    issueContractLicense: INTERNAL,
    issueClusterLicense: INTERNAL,
    verifyRegistration: ANY_CALLER,
    revocationList: ANY_CALLER,
    caCertificate: ANY_CALLER,
    getIssuedLicenses: INTERNAL,
    // Only the gateway's /register registers: one operation here, which finds or makes the holder's account.
    registerLicense: INTERNAL,
    recordRegistration: INTERNAL,
    listRegistrations: INTERNAL,
  }),
  policiesOf(marketplaceListenerV1.MarketplaceListenerServiceService, {
    getVersion: ANY_CALLER,
    createInstaller: INTERNAL,
    listInstallers: INTERNAL,
    listSubscriptions: INTERNAL,
    getSubscription: INTERNAL,
    revokeSubscription: INTERNAL,
    pingSubscription: INTERNAL,
    listAuditReports: INTERNAL,
    getSettingWarnings: INTERNAL,
    reportUsage: INTERNAL,
    checkReadiness: INTERNAL,
  }),
  policiesOf(metricsproxyV1.MetricsproxyServiceService, {
    getVersion: ANY_CALLER,
    registerFlavorA: INTERNAL,
    unregisterFlavorA: INTERNAL,
    registerFlavorB: INTERNAL,
    unregisterFlavorB: INTERNAL,
    lookupBackend: INTERNAL,
  }),
  policiesOf(orgClaimsV1.OrgClaimsServiceService, {
    createClaim: INTERNAL,
    claimOrg: INTERNAL,
    oldestClaimable: INTERNAL,
    checkClaimable: INTERNAL,
    markClaimable: INTERNAL,
  }),
  policiesOf(orgTokensV1.OrgTokensServiceService, {
    getSyncToken: INTERNAL,
    createSyncToken: INTERNAL,
    deleteSyncToken: INTERNAL,
    listSystemAdminTokens: INTERNAL,
    deleteSystemAdminToken: INTERNAL,
    listBusAccounts: INTERNAL,
    revokeBusAccount: INTERNAL,
    createBusAccount: INTERNAL,
    getBusAccountByKey: INTERNAL,
  }),
  policiesOf(orgsTeamsAuditV1.AuditServiceService, {
    getVersion: ANY_CALLER,
    recordAuditEvent: INTERNAL,
    recordAuditEvents: INTERNAL,
    listAuditEvents: INTERNAL,
  }),
  policiesOf(orgsTeamsAvatarsV1.AvatarsServiceService, {
    getVersion: ANY_CALLER,
    getAvatar: INTERNAL,
    updateAvatar: INTERNAL,
    deleteAvatar: INTERNAL,
    getAvatarObject: INTERNAL,
  }),
  policiesOf(orgsTeamsOrgsV1.OrganizationsServiceService, {
    getVersion: ANY_CALLER,
    createOrg: INTERNAL,
    getOrg: byViewer(() => []),
    editOrg: INTERNAL,
    deleteOrg: INTERNAL,
    listMembers: publicMethod((r, account) => ({
      questions: [{ relation: 'access', object: `organization:${r.orgId}` }],
      request: paged({ ...r, viewerId: account.id }),
      answer: membersAsSeenBy(account),
    })),
    getMembership: byViewer((r) => [{ relation: 'access', object: `organization:${r.orgId}` }]),
    setMemberVisibility: INTERNAL,
    removeMember: INTERNAL,
    listTeams: publicMethod((r) => ({ questions: [{ relation: 'list_team', object: `organization:${r.orgId}` }], request: paged(r) })),
    createTeam: INTERNAL,
    getTeam: publicMethod((r) => ({ questions: [{ relation: 'view', object: `team:${r.teamId}` }] })),
    editTeam: INTERNAL,
    deleteTeam: INTERNAL,
    listTeamMembers: publicMethod((r, account) => ({
      questions: [{ relation: 'list_members', object: `team:${r.teamId}` }],
      request: paged(r),
      answer: membersAsSeenBy(account),
    })),
    getTeamMember: INTERNAL,
    addTeamMember: INTERNAL,
    removeTeamMember: INTERNAL,
    listOrgs: INTERNAL,
    listUserOrgs: INTERNAL,
    searchTeams: INTERNAL,
    getOrgPermissions: INTERNAL,
    listUserTeams: INTERNAL,
    importOrgs: INTERNAL,
  }),
  policiesOf(orgsTeamsSettingsV1.SiteSettingsServiceService, {
    getVersion: ANY_CALLER,
    getBranding: INTERNAL,
    updateBranding: INTERNAL,
    listAllowedDomains: INTERNAL,
    addAllowedDomain: INTERNAL,
    removeAllowedDomain: INTERNAL,
    getRegistration: INTERNAL,
    setRegistration: INTERNAL,
  }),
  policiesOf(orgsTeamsV1.OrgsTeamsServiceService, {
    getVersion: ANY_CALLER,
    authenticate: INTERNAL,
    authenticateBasic: INTERNAL,
    createUser: INTERNAL,
    getUser: INTERNAL,
    deleteUnusedUser: INTERNAL,
    getUsers: INTERNAL,
    getAccounts: INTERNAL,
    listUserAccounts: INTERNAL,
    createToken: INTERNAL,
    listTokens: INTERNAL,
    deleteToken: INTERNAL,
    searchUsers: INTERNAL,
    editUser: INTERNAL,
    deleteUser: INTERNAL,
    editUserSettings: INTERNAL,
    changePassword: INTERNAL,
    clearSignInLockout: INTERNAL,
    createSession: INTERNAL,
    authenticateSession: INTERNAL,
    listSessions: INTERNAL,
    deleteSession: INTERNAL,
    signUp: INTERNAL,
    signInExternal: INTERNAL,
    getTwoFactor: INTERNAL,
    beginTwoFactorEnrolment: INTERNAL,
    confirmTwoFactor: INTERNAL,
    disableTwoFactor: INTERNAL,
    regenerateRecoveryCodes: INTERNAL,
    resetTwoFactor: INTERNAL,
    getTwoFactorRequirement: INTERNAL,
    setTwoFactorRequirement: INTERNAL,
    revokeUserCredentials: INTERNAL,
    listGroupMappings: INTERNAL,
    createGroupMapping: INTERNAL,
    deleteGroupMapping: INTERNAL,
    linkExternalIdentity: INTERNAL,
    listExternalIdentities: INTERNAL,
    unlinkExternalIdentity: INTERNAL,
    sendVerificationMail: INTERNAL,
    verifyEmail: INTERNAL,
    requestPasswordReset: INTERNAL,
    checkPasswordReset: INTERNAL,
    resetPassword: INTERNAL,
  }),
  policiesOf(outagesV1.SystemOutagesServiceService, {
    createOutage: INTERNAL,
    outageReport: INTERNAL,
    listOutageTags: INTERNAL,
  }),
  policiesOf(summaryV1.UsageSummaryServiceService, {
    renderUsageSummary: INTERNAL,
  }),
  policiesOf(usageReportV1.UsageReportServiceService, {
    generatedMonths: INTERNAL,
    getUsageView: INTERNAL,
    getObjectQuotaHistory: INTERNAL,
    getNamespaceBilling: INTERNAL,
  }),
];

const index = new Map<string, MethodPolicy>();
for (const service of METHOD_POLICIES) for (const [path, policy] of service.byPath) index.set(path, policy);

/** The policy of a method by its path (`/platformadmin.authz.v1.AuthzService/Check`); undefined for none. */
export function methodPolicy(path: string): MethodPolicy | undefined {
  return index.get(path);
}

/** Whether a service (`platformadmin.authz.v1.AuthzService`) has a table. */
export function hasPolicies(service: string): boolean {
  return METHOD_POLICIES.some((s) => s.service === service);
}
