import { status as grpcStatus } from '@grpc/grpc-js';
import { registeredRoutesOn } from '@platform/app-gateway';
import { authzV1, orgsTeamsOrgsV1 } from '@platform/proto';
import { callAsStranger } from '@platform/service-testing';
import { formOf, bootTestPlatform, type TestPlatform } from './harness';

/**
 * The authorization matrix of the route table (custom roles, contracts, site settings, organizations, teams, the
 * dashboards, cluster sets, client organizations, the metrics proxy, notifications and accounts): for
 * every route, five callers — anonymous, an authenticated non-member (outsider), a member without the relation, a holder of the
 * relation (through a custom role on a team, or the owner where the spec gives the right to owners only)
 * and a site admin — get through (any status but 401/403, never a 5xx) or are refused (401 anonymous on
 * token routes, 403 otherwise), as the table below says. The table must name every registered route under those paths.
 *
 * Each caller acts on an organization made for it (`fixture()`: the organization, its two teams and their members, the
 * custom role), unless nothing the caller does can change what another caller meets there:
 * - A GET (or HEAD) row changes nothing, so its six callers share one organization, and every GET row that needs
 *   the same organization (the same holder's grant, contract and hub) shares that one too, made once on first use.
 * - On a row that changes something, the callers it expects refused share one organization of the row's own: a
 *   refusal (401/403) comes before the route acts, so it changes nothing; a caller wrongly let through fails the
 *   row by itself, whatever it did to the others. Each caller it expects through gets a fresh organization, so a
 *   destructive route (deleting the team, the role, the organization) cannot spoil another caller or the next row.
 * A shared organization is copied per caller with the caller's own `me`, so `login(f.me)` and `self(f)` name the caller.
 * Every other test here makes its own organization: they change it.
 */

type Actor = 'anonymous' | 'outsider' | 'member' | 'holder' | 'owner' | 'siteadmin';
const ACTORS: Actor[] = ['anonymous', 'outsider', 'member', 'holder', 'owner', 'siteadmin'];
const AUTHENTICATED: Actor[] = ['outsider', 'member', 'holder', 'owner', 'siteadmin'];
const EVERYONE: Actor[] = ACTORS;
/** Org members and site admins: routes whose relation every member holds. */
const MEMBERS: Actor[] = ['member', 'holder', 'owner', 'siteadmin'];
/** Org members acting on their own membership; a site admin who is not a member has none to act on. */
const MEMBERS_ONLY: Actor[] = ['member', 'holder', 'owner'];
/** The spec's "org ownership": owners and site admins, never a custom role. */
const OWNERS: Actor[] = ['owner', 'siteadmin'];
/** Holders of the route's relation: the custom-role holder, owners and site admins. */
const HOLDERS: Actor[] = ['holder', 'owner', 'siteadmin'];

/** The ids a row's request is built from. */
interface Fixture {
  org: string;
  orgId: number;
  devs: number;
  roleId: number;
  me: Actor;
  ids: Record<string, number>;
  /** A contract of the organization, with one cluster bound (`ccID`), for the contract rows (`contract: true`). */
  contract: number;
  ccID: number;
  /** The UID of the organization's hub cluster `hub`, with `hub: true`. */
  hubUid: string;
}

interface Row {
  pass: Actor[];
  /** Permission (`action:namespace`) the holder's custom role carries; default: the route's last requirement. */
  grant?: string;
  path?: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
  /** A multipart body instead of JSON. */
  form?: (f: Fixture) => FormData;
  /** The fixture needs a contract of the organization with a bound cluster. */
  contract?: boolean;
  /** The fixture needs a hub cluster of the organization, `hub` (the cluster-set rows under `/clusters/{owner}/{cluster}`). */
  hub?: boolean;
  /** Refused callers get 401, not 403 (the metrics proxy's auth hook: a non-member is "not authenticated" for the metrics). */
  refusedWith401?: boolean;
}

const CLUSTER = '6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e';
/** Fixture organizations per import request (see `importFixtures`). */
const IMPORT_BATCH = 25;
const YEAR = 365 * 24 * 3600;
/** The usage views of October 2026's productdb. */
const USAGE_VIEWS = '/dashboard/summary/2026/10/usage-report/products/productdb/views';
const login = (a: Actor) => (a === 'siteadmin' ? 'root' : a === 'anonymous' ? 'member' : a);
const self = (f: Fixture) => f.ids[login(f.me)];

/** Who the spec lets through, route by route (method and path as registered in the gateway). */
const MATRIX: Record<string, Row> = {
  // Custom roles and allowed permissions — every route needs a token, ?org=, and org membership; roles add their relation.
  'GET /authz/objects/:objectType/:objID/allowed-permissions': {
    pass: MEMBERS,
    path: (f) => `/authz/objects/organization/${f.orgId}/allowed-permissions`,
  },
  'POST /authz/objects/allowed-permissions': { pass: MEMBERS, body: (f) => [{ objectType: 'organization', objectID: f.orgId }] },
  // Who has access: owners and site admins (manage_owners:org), never a custom role.
  'GET /authz/objects/:objectType/:objID/access': { pass: OWNERS, path: (f) => `/authz/objects/organization/${f.orgId}/access` },
  // Site administration: site admins only.
  'POST /admin/users': {
    pass: ['siteadmin'],
    body: (f) => ({ username: `made-${f.org}`, email: `made-${f.org}@example.com`, password: 'a-long-enough-password' }),
  },
  // User administration: an unknown user (404) counts as let through, so no row deletes a user the fixture needs.
  'GET /admin/users': { pass: ['siteadmin'] },
  'PATCH /admin/users/:username': { pass: ['siteadmin'], path: () => '/admin/users/no-such-user', body: () => ({ full_name: 'x' }) },
  'DELETE /admin/users/:username': { pass: ['siteadmin'], path: () => '/admin/users/no-such-user' },
  'DELETE /admin/users/:username/lockout': { pass: ['siteadmin'], path: () => '/admin/users/no-such-user/lockout' },
  'POST /admin/users/:username/verification-mail': { pass: ['siteadmin'], path: () => '/admin/users/no-such-user/verification-mail' },
  'GET /admin/orgs': { pass: ['siteadmin'] },
  // Gitea's adminCreateOrg: an organization owned by the user named; an unknown user (404) counts as let through.
  'POST /admin/users/:username/orgs': {
    pass: ['siteadmin'],
    path: () => '/admin/users/no-such-user/orgs',
    body: (f) => ({ username: `made-for-${f.org}` }),
  },
  // The bulk import (docs/import.md): site admins only; with no owners named, the importing admin owns it.
  'POST /admin/orgs/import': { pass: ['siteadmin'], body: (f) => ({ organizations: [{ name: `imported-${f.org}` }] }) },
  // Second factors and credentials: the site admins'. An unknown user (404) counts as let through.
  'DELETE /admin/users/:username/two-factor': { pass: ['siteadmin'], path: () => '/admin/users/no-such-user/two-factor' },
  'DELETE /admin/users/:username/credentials': { pass: ['siteadmin'], path: () => '/admin/users/no-such-user/credentials' },
  'GET /admin/two-factor': { pass: ['siteadmin'] },
  'PUT /admin/two-factor': { pass: ['siteadmin'], body: () => ({ requirement: 'off' }) },
  // Single sign-on's groups to teams (docs/authentication.md, "Groups to teams"): an organization's mappings are its
  // owners' (and site admins'), never a custom role's; the site-wide mappings to site admin are the site admins'. An
  // unknown mapping (404) counts as let through, so no row removes a real one.
  'GET /orgs/:orgname/group-mappings': { pass: OWNERS },
  'POST /orgs/:orgname/group-mappings': { pass: OWNERS, body: (f) => ({ group: 'matrix-devs', team_id: f.devs }) },
  'DELETE /orgs/:orgname/group-mappings/:id': { pass: OWNERS, path: (f) => `/orgs/${f.org}/group-mappings/999999` },
  'GET /admin/group-mappings': { pass: ['siteadmin'] },
  'POST /admin/group-mappings': { pass: ['siteadmin'], body: () => ({ group: 'matrix-admins' }) },
  'DELETE /admin/group-mappings/:id': { pass: ['siteadmin'], path: () => '/admin/group-mappings/999999' },
  // Service accounts: site-wide ones are the site admins', an organization's its owners' (and site admins').
  // A refusal comes before the id is looked up, so an unknown id (404) counts as let through.
  'GET /admin/service-accounts': { pass: ['siteadmin'] },
  'POST /admin/service-accounts': { pass: ['siteadmin'], body: (f) => ({ name: `sa-${f.org}` }) },
  'GET /admin/service-accounts/:id': { pass: ['siteadmin'], path: () => '/admin/service-accounts/999999' },
  'PATCH /admin/service-accounts/:id': {
    pass: ['siteadmin'],
    path: () => '/admin/service-accounts/999999',
    body: () => ({ active: false }),
  },
  'DELETE /admin/service-accounts/:id': { pass: ['siteadmin'], path: () => '/admin/service-accounts/999999' },
  'GET /admin/service-accounts/:id/tokens': { pass: ['siteadmin'], path: () => '/admin/service-accounts/999999/tokens' },
  'POST /admin/service-accounts/:id/tokens': {
    pass: ['siteadmin'],
    path: () => '/admin/service-accounts/999999/tokens',
    body: () => ({ name: 't' }),
  },
  'DELETE /admin/service-accounts/:id/tokens/:tokenId': { pass: ['siteadmin'], path: () => '/admin/service-accounts/999999/tokens/1' },
  'GET /orgs/:orgname/service-accounts': { pass: OWNERS },
  'POST /orgs/:orgname/service-accounts': { pass: OWNERS, body: (f) => ({ name: `osa-${f.org}` }) },
  'GET /orgs/:orgname/service-accounts/:id': { pass: OWNERS, path: (f) => `/orgs/${f.org}/service-accounts/999999` },
  'PATCH /orgs/:orgname/service-accounts/:id': {
    pass: OWNERS,
    path: (f) => `/orgs/${f.org}/service-accounts/999999`,
    body: () => ({ active: false }),
  },
  'DELETE /orgs/:orgname/service-accounts/:id': { pass: OWNERS, path: (f) => `/orgs/${f.org}/service-accounts/999999` },
  'GET /orgs/:orgname/service-accounts/:id/tokens': { pass: OWNERS, path: (f) => `/orgs/${f.org}/service-accounts/999999/tokens` },
  'POST /orgs/:orgname/service-accounts/:id/tokens': {
    pass: OWNERS,
    path: (f) => `/orgs/${f.org}/service-accounts/999999/tokens`,
    body: () => ({ name: 't' }),
  },
  'DELETE /orgs/:orgname/service-accounts/:id/tokens/:tokenId': {
    pass: OWNERS,
    path: (f) => `/orgs/${f.org}/service-accounts/999999/tokens/1`,
  },
  'GET /admin/audit-events': { pass: ['siteadmin'] },
  'GET /authz/roles/available_permissions': { pass: MEMBERS },
  'GET /authz/roles': { pass: MEMBERS },
  // A role may carry only what its maker holds (docs/authorization.md): the holder holds create_role itself.
  'POST /authz/roles': {
    pass: HOLDERS,
    body: () => ({ name: 'made-by-test', permissions: [{ namespace: 'org', action: 'create_role' }] }),
  },
  'GET /authz/roles/:id': { pass: MEMBERS, path: (f) => `/authz/roles/${f.roleId}` },
  'PUT /authz/roles/:id': { pass: HOLDERS, path: (f) => `/authz/roles/${f.roleId}`, body: () => ({ description: 'changed' }) },
  'DELETE /authz/roles/:id': { pass: HOLDERS, path: (f) => `/authz/roles/${f.roleId}` },
  'GET /authz/roles/:id/principals': { pass: HOLDERS, path: (f) => `/authz/roles/${f.roleId}/principals` },
  // Site settings
  'GET /branding': { pass: EVERYONE },
  'POST /branding': { pass: HOLDERS, body: () => ({ primaryColor: '#336699' }) },
  'GET /allowed-domains': { pass: EVERYONE },
  'POST /allowed-domains': { pass: ['siteadmin'], body: () => ({ name: 'matrix.example.org' }) },
  'PATCH /allowed-domains': { pass: ['siteadmin'], body: () => ({ name: 'matrix.example.org' }) },
  'GET /disable-registration': { pass: EVERYONE },
  'POST /disable-registration': { pass: ['siteadmin'], body: () => ({ disableRegistration: false }) },
  // Organizations, members and public members
  'POST /orgs': { pass: AUTHENTICATED, body: (f) => ({ username: `${f.org}-new` }) },
  // Lists answer what the caller may see (docs/organizations-and-teams.md); a user's permissions in an organization
  // are their own to read, or for those who may list its teams.
  'GET /orgs': { pass: EVERYONE },
  'GET /user/orgs': { pass: AUTHENTICATED },
  'GET /users/:username/orgs': { pass: EVERYONE, path: () => '/users/member/orgs' },
  'GET /users/:username/orgs/:orgname/permissions': { pass: MEMBERS, path: (f) => `/users/owner/orgs/${f.org}/permissions` },
  'PATCH /orgs/claim/:claimID': { pass: AUTHENTICATED, path: () => '/orgs/claim/00000000-0000-4000-8000-000000000000' },
  'GET /orgs/claim': { pass: ['siteadmin'] },
  'GET /orgs/:orgname': { pass: EVERYONE },
  'PATCH /orgs/:orgname': { pass: HOLDERS, body: () => ({ description: 'changed' }) },
  'DELETE /orgs/:orgname': { pass: OWNERS },
  'GET /orgs/:orgname/user/:username': { pass: AUTHENTICATED, path: (f) => `/orgs/${f.org}/user/member` },
  'GET /orgs/:orgname/is-owner': { pass: ['owner'] },
  'GET /orgs/:orgname/members': { pass: EVERYONE },
  'POST /orgs/:orgname/members/action/private': { pass: MEMBERS_ONLY, path: (f) => `/orgs/${f.org}/members/action/private?uid=${self(f)}` },
  'POST /orgs/:orgname/members/action/public': { pass: MEMBERS_ONLY, path: (f) => `/orgs/${f.org}/members/action/public?uid=${self(f)}` },
  'POST /orgs/:orgname/members/action/remove': {
    pass: OWNERS,
    path: (f) => `/orgs/${f.org}/members/action/remove?uid=${f.ids.member}`,
  },
  'POST /orgs/:orgname/members/action/leave': { pass: MEMBERS_ONLY, path: (f) => `/orgs/${f.org}/members/action/leave?uid=${self(f)}` },
  'GET /orgs/:orgname/members/:username': { pass: EVERYONE, path: (f) => `/orgs/${f.org}/members/member` },
  'DELETE /orgs/:orgname/members/:username': { pass: OWNERS, path: (f) => `/orgs/${f.org}/members/member` },
  'GET /orgs/:orgname/public_members': { pass: EVERYONE },
  'GET /orgs/:orgname/public_members/:username': { pass: EVERYONE, path: (f) => `/orgs/${f.org}/public_members/member` },
  // One's own public membership; a site admin anyone's, as Gitea lets them (a site admin who is no member gets 404, let through).
  'PUT /orgs/:orgname/public_members/:username': { pass: MEMBERS, path: (f) => `/orgs/${f.org}/public_members/${login(f.me)}` },
  'DELETE /orgs/:orgname/public_members/:username': { pass: MEMBERS, path: (f) => `/orgs/${f.org}/public_members/${login(f.me)}` },
  'GET /orgs/:orgname/avatar/': { pass: MEMBERS },
  'POST /orgs/:orgname/avatar/': { pass: HOLDERS },
  'POST /orgs/:orgname/avatar/delete': { pass: HOLDERS },
  'GET /orgs/:orgname/manager/sync-token': { pass: HOLDERS },
  'POST /orgs/:orgname/manager/sync-token': { pass: HOLDERS, body: () => ({}) },
  'DELETE /orgs/:orgname/manager/sync-token': { pass: HOLDERS },
  'GET /orgs/:orgname/manager/user-token': { pass: HOLDERS },
  'POST /orgs/:orgname/manager/user-token': { pass: HOLDERS, body: () => ({}) },
  'DELETE /orgs/:orgname/manager/user-token': { pass: HOLDERS },
  'GET /orgs/:orgname/tokens/access-tokens': { pass: HOLDERS },
  'DELETE /orgs/:orgname/tokens/access-tokens/:id': { pass: HOLDERS, path: (f) => `/orgs/${f.org}/tokens/access-tokens/999999` },
  'GET /orgs/:orgname/tokens/bus-tokens': { pass: HOLDERS },
  'POST /orgs/:orgname/tokens/bus-tokens/:id/revoke': { pass: HOLDERS, path: (f) => `/orgs/${f.org}/tokens/bus-tokens/999999/revoke` },
  // Beyond the spec (docs/clusters.md): enrolling hub clusters, and listing them for members.
  'POST /orgs/:orgname/clusters': { pass: HOLDERS, body: () => ({ name: 'matrix-hub' }) },
  'GET /orgs/:orgname/clusters': { pass: MEMBERS },
  // Teams and team members
  'GET /orgs/:orgname/teams': { pass: MEMBERS },
  'POST /orgs/:orgname/teams': { pass: HOLDERS, body: () => ({ name: 'new-team', type: 'general' }) },
  'GET /orgs/:orgname/teams/search': { pass: MEMBERS },
  // Joining takes what adding takes (docs/authorization.md, "Joining teams").
  'POST /orgs/:orgname/teams/:teamid/action/join': {
    pass: HOLDERS,
    grant: 'add:team-member',
    path: (f) => `/orgs/${f.org}/teams/${f.devs}/action/join?uid=${self(f)}`,
  },
  'POST /orgs/:orgname/teams/:teamid/action/leave': {
    pass: ['member'],
    path: (f) => `/orgs/${f.org}/teams/${f.devs}/action/leave?uid=${self(f)}`,
  },
  'POST /orgs/:orgname/teams/:teamid/action/remove': {
    pass: HOLDERS,
    path: (f) => `/orgs/${f.org}/teams/${f.devs}/action/remove?uid=${f.ids.member}`,
  },
  'POST /orgs/:orgname/teams/:teamid/action/add': {
    pass: HOLDERS,
    path: (f) => `/orgs/${f.org}/teams/${f.devs}/action/add?uid=${f.ids.outsider}`,
  },
  'GET /teams/:teamid': { pass: MEMBERS, path: (f) => `/teams/${f.devs}` },
  'PATCH /teams/:teamid': { pass: HOLDERS, path: (f) => `/teams/${f.devs}`, body: () => ({ name: 'devs-renamed' }) },
  'DELETE /teams/:teamid': { pass: HOLDERS, path: (f) => `/teams/${f.devs}` },
  'GET /teams/:teamid/members': { pass: MEMBERS, path: (f) => `/teams/${f.devs}/members` },
  'GET /teams/:teamid/members/:username': { pass: MEMBERS, path: (f) => `/teams/${f.devs}/members/member` },
  'PUT /teams/:teamid/members/:username': { pass: HOLDERS, path: (f) => `/teams/${f.devs}/members/outsider` },
  'DELETE /teams/:teamid/members/:username': { pass: HOLDERS, path: (f) => `/teams/${f.devs}/members/member` },
  // Site-admin contract rows — site admins only; `org` (appended) names the organization owning the fixture's contract.
  'GET /contracts': { pass: ['siteadmin'] },
  'POST /contracts': {
    pass: ['siteadmin'],
    form: () => formOf({ products: 'productdb', end: String(Math.floor(Date.now() / 1000) + YEAR) }),
  },
  'GET /contracts/available_products': { pass: ['siteadmin'] },
  'GET /contracts/active/associated-clusters/:clusterID/status': {
    pass: ['siteadmin'],
    path: () => `/contracts/active/associated-clusters/${CLUSTER}/status`,
  },
  'POST /contracts/active/associated-clusters/batch-status': { pass: ['siteadmin'], body: () => ({ clusters: [CLUSTER] }) },
  'GET /contracts/:id': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}` },
  'PUT /contracts/:id': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}`,
    form: () => formOf({ name: 'renamed' }),
  },
  'DELETE /contracts/:id': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}` },
  'POST /contracts/:id/extend': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/extend`,
    body: () => ({ end: Math.floor(Date.now() / 1000) + 2 * YEAR }),
  },
  'POST /contracts/:id/revoke': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}/revoke` },
  'GET /contracts/:id/document': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}/document` },
  'GET /contracts/:id/audit': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}/audit` },
  'GET /contracts/:id/quota-usage': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}/quota-usage` },
  'GET /contracts/:id/clusters': { pass: ['siteadmin'], contract: true, path: (f) => `/contracts/${f.contract}/clusters` },
  'POST /contracts/:id/clusters': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/clusters`,
    body: () => [{ cluster: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d' }],
  },
  'GET /contracts/:id/clusters/imported/non-associated': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/clusters/imported/non-associated`,
  },
  'DELETE /contracts/:id/clusters/:ccID': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/clusters/${f.ccID}`,
  },
  'PATCH /contracts/:id/clusters/:ccID/name': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/clusters/${f.ccID}/name`,
    body: () => ({ clusterName: 'renamed' }),
  },
  'PATCH /contracts/:id/clusters/:ccID/tags': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/clusters/${f.ccID}/tags`,
    body: () => ({ tags: ['prod'] }),
  },
  // User contract rows — the `org` organization's members and site admins (access:org); assigning, unbinding, renaming and
  // retagging clusters take add_cluster:contract_mgmt, preferences updated_preferences:contracts on the contract.
  'GET /user/contracts': { pass: MEMBERS },
  'GET /user/contracts/active-offline-contracts': { pass: MEMBERS },
  'POST /user/contracts/assign-cluster': {
    pass: HOLDERS,
    contract: true,
    body: (f) => ({ clusterId: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d', contractIds: [f.contract] }),
  },
  'GET /user/contracts/active/associated-with/clusters/:clusterID': {
    pass: MEMBERS,
    path: () => `/user/contracts/active/associated-with/clusters/${CLUSTER}`,
  },
  'GET /user/contracts/active/not-associated-with/clusters/:clusterID': {
    pass: MEMBERS,
    path: () => `/user/contracts/active/not-associated-with/clusters/${CLUSTER}`,
  },
  'GET /user/contracts/active/associated-clusters': { pass: MEMBERS },
  'GET /user/contracts/active/associated-clusters/:clusterID/status': {
    pass: MEMBERS,
    path: () => `/user/contracts/active/associated-clusters/${CLUSTER}/status`,
  },
  'POST /user/contracts/active/associated-clusters/batch-status': { pass: MEMBERS, body: () => ({ clusters: [CLUSTER] }) },
  'GET /user/contracts/:id': { pass: MEMBERS, contract: true, path: (f) => `/user/contracts/${f.contract}` },
  'PUT /user/contracts/:id/preferences': {
    pass: HOLDERS,
    grant: 'updated_preferences:contracts',
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/preferences`,
    body: () => ({ autoAssignCluster: true }),
  },
  'GET /user/contracts/:id/audit': { pass: MEMBERS, contract: true, path: (f) => `/user/contracts/${f.contract}/audit` },
  'GET /user/contracts/:id/quota-usage': { pass: MEMBERS, contract: true, path: (f) => `/user/contracts/${f.contract}/quota-usage` },
  'GET /user/contracts/:id/document': { pass: MEMBERS, contract: true, path: (f) => `/user/contracts/${f.contract}/document` },
  'GET /user/contracts/:id/clusters': { pass: MEMBERS, contract: true, path: (f) => `/user/contracts/${f.contract}/clusters` },
  'POST /user/contracts/:id/clusters': {
    pass: HOLDERS,
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/clusters`,
    body: () => [{ cluster: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d' }],
  },
  'GET /user/contracts/:id/clusters/imported/non-associated': {
    pass: MEMBERS,
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/clusters/imported/non-associated`,
  },
  'DELETE /user/contracts/:id/clusters/:ccID': {
    pass: HOLDERS,
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/clusters/${f.ccID}`,
  },
  'PATCH /user/contracts/:id/clusters/:ccID/name': {
    pass: HOLDERS,
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/clusters/${f.ccID}/name`,
    body: () => ({ clusterName: 'renamed' }),
  },
  'PATCH /user/contracts/:id/clusters/:ccID/tags': {
    pass: HOLDERS,
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/clusters/${f.ccID}/tags`,
    body: () => ({ tags: ['prod'] }),
  },
  // Licenses (docs/licensing.md). The fixture's cluster is not enrolled, so a license for it would be an offline
  // one, which the fixture contract does not allow: those let through get 405, never 401/403.
  'POST /contracts/:id/clusters/:ccID/issue-license': {
    pass: ['siteadmin'],
    contract: true,
    path: (f) => `/contracts/${f.contract}/clusters/${f.ccID}/issue-license`,
  },
  'POST /user/contracts/:id/clusters/:ccID/issue-license': {
    pass: HOLDERS,
    grant: 'issue-license:cluster',
    contract: true,
    path: (f) => `/user/contracts/${f.contract}/clusters/${f.ccID}/issue-license`,
  },
  // Any account's own contracts (none here: 404); registration and the CRL and CA certificate are public.
  // With `org` (appended), the organization's contracts: who may issue its licenses. Without it, the caller's own
  // account, open to anyone signed in (apps/gateway/test/license-proxy.test.ts, licenses.e2e).
  'POST /license/issue': { pass: HOLDERS, grant: 'issue-license:cluster', body: () => ({ cluster: CLUSTER }) },
  'POST /register': { pass: EVERYONE, body: () => ({ clusterUID: CLUSTER, features: 'postgres', license: 'AAAA' }) },
  'GET /licenses/crl': { pass: EVERYONE },
  'GET /licenses/ca': { pass: EVERYONE },
  // The licenses clusters registered: site admins (view_licensed_users:site_admin) only.
  'GET /licenses/registrations': { pass: ['siteadmin'] },
  // Installers: an online installer for an organization (an empty body) carries its license issuing, so it takes who
  // may issue them, not only membership (apps/gateway/test/license-proxy.test.ts).
  'POST /user/license-proxy': { pass: HOLDERS, grant: 'issue-license:cluster', body: () => ({}) },
  // System outages — site admins (view_system_outages:site_admin) only; `org` (appended) is required.
  'POST /dashboard/system-outages/': {
    pass: ['siteadmin'],
    body: (f) => ({ clusterID: f.org, start: '2026-01-01T00:00:00Z', end: '2026-01-01T01:00:00Z' }),
  },
  'GET /dashboard/system-outages/report': { pass: ['siteadmin'] },
  'GET /dashboard/system-outages/tags': { pass: ['siteadmin'] },
  // Licensed users, clusters, licenses and products — site admins (view_licensed_users:site_admin) only; an
  // unknown user/cluster pair is 404 (through).
  'GET /dashboard/users/': { pass: ['siteadmin'] },
  'GET /dashboard/users/active': { pass: ['siteadmin'] },
  'GET /dashboard/users/inactive': { pass: ['siteadmin'] },
  'GET /dashboard/users/:uid/clusters/': { pass: ['siteadmin'], path: (f) => `/dashboard/users/${f.ids.owner}/clusters/` },
  'GET /dashboard/users/:uid/clusters/active': { pass: ['siteadmin'], path: (f) => `/dashboard/users/${f.ids.owner}/clusters/active` },
  'GET /dashboard/users/:uid/clusters/:cid': { pass: ['siteadmin'], path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}` },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/active': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/active`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic/products/`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic/products/productdb`,
  },
  'GET /dashboard/clusters/:cid/licenses/active': { pass: ['siteadmin'], path: () => `/dashboard/clusters/${CLUSTER}/licenses/active` },
  // Licensed resources and events — site admins (view_licensed_users:site_admin) only; a product never
  // reported is 404 for resources (no cluster is asked) and raw-event (through), the event lists are empty.
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/resources': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic/products/productdb/resources`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/events-histories': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic/products/productdb/events-histories`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/events/': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic/products/productdb/events/`,
  },
  'GET /dashboard/users/:uid/clusters/:cid/licenses/:lid/products/:productName/events/raw-event': {
    pass: ['siteadmin'],
    path: (f) => `/dashboard/users/${f.ids.owner}/clusters/${CLUSTER}/licenses/lic/products/productdb/events/raw-event?key=k&version=1`,
  },
  // Usage reports — site admins (view_usage_analytics:site_admin) only; an object without samples is 404 (through).
  'GET /dashboard/summary/generated-months': { pass: ['siteadmin'] },
  'GET /dashboard/summary/object-quota-history/clusters/:clusterUID/objects/:objectID': {
    pass: ['siteadmin'],
    path: () => `/dashboard/summary/object-quota-history/clusters/${CLUSTER}/objects/${CLUSTER}`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/objects-usage-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/objects-usage-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/clusters-usage-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/clusters-usage-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/namespaces-usage-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/namespaces-usage-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/gks-usage-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/gks-usage-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/contracts-usage-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/contracts-usage-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/object-quota-history-summaries-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/object-quota-history-summaries-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/objects-cluster-mode-usage-view': {
    pass: ['siteadmin'],
    path: () => `${USAGE_VIEWS}/objects-cluster-mode-usage-view`,
  },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/object-quota-history-summaries-view/clusters/:clusterUID/objects/:objectID':
    {
      pass: ['siteadmin'],
      path: () => `${USAGE_VIEWS}/object-quota-history-summaries-view/clusters/${CLUSTER}/objects/${CLUSTER}`,
    },
  'GET /dashboard/summary/:year/:month/usage-report/products/:productKey/views/objects-cluster-mode-usage-view/clusters/:clusterUID/objects/:objectID':
    {
      pass: ['siteadmin'],
      path: () => `${USAGE_VIEWS}/objects-cluster-mode-usage-view/clusters/${CLUSTER}/objects/${CLUSTER}`,
    },
  // Namespace billing — the spec's org ownership: owners and site admins, never a custom role.
  'GET /dbaas/billing/reports/namespaces': { pass: OWNERS },
  'GET /dbaas/billing/reports/clusters/:clusterID/namespaces/:namespaceName': {
    pass: OWNERS,
    path: () => `/dbaas/billing/reports/clusters/${CLUSTER}/namespaces/demo`,
  },
  // PDF usage summary — site admins (view_usage_analytics:site_admin) only; a month without usage is still a PDF.
  'GET /dashboard/summary/:year/:month/download': { pass: ['siteadmin'], path: () => '/dashboard/summary/2026/10/download' },
  // Marketplace rows — site admins (view_marketplace_usage:site_admin) only. The fixture has no subscription, so
  // the rows naming one answer 400 to a site admin (through). The metered-billing proxy is not here: its
  // pairs exist only on ProviderAMarketplace and ProviderCMarketplace (404 on this Hosted deployment), so
  // apps/gateway/test/marketplaces.test.ts checks 401/403 for every non-admin caller on those two.
  'GET /dashboard/marketplaces/subscriptions': { pass: ['siteadmin'] },
  'GET /dashboard/marketplaces/settings/warnings': { pass: ['siteadmin'] },
  'GET /dashboard/marketplaces/:marketplace/:subscriptionId': { pass: ['siteadmin'], path: () => '/dashboard/marketplaces/ProviderA/none' },
  'DELETE /dashboard/marketplaces/:marketplace/:subscriptionId': {
    pass: ['siteadmin'],
    path: () => '/dashboard/marketplaces/ProviderB/none',
  },
  'GET /dashboard/marketplaces/:marketplace/:subscriptionId/ping': {
    pass: ['siteadmin'],
    path: () => '/dashboard/marketplaces/ProviderC/none/ping',
  },
  'GET /dashboard/marketplaces/:marketplace/:subscriptionId/audit-logs': {
    pass: ['siteadmin'],
    path: () => '/dashboard/marketplaces/ProviderA/none/audit-logs',
  },
  // Cluster sets on the organization's hub `hub` (docs/cluster-sets.md): members (view on the hub) read,
  // owners (manage on the hub) and site admins change; a custom role grants neither (the holder is a member).
  ...hubRows(),
  // Client organizations (docs/client-organizations.md): site admins only (Organization_SiteAdminCan*ClientOrg); an unknown
  // client org's 404 and a bad body's 422 count as getting through.
  'GET /user/clients': { pass: ['siteadmin'] },
  'GET /user/client/:id': { pass: ['siteadmin'], path: () => '/user/client/999999' },
  'GET /user/client/:orgname/status': { pass: ['siteadmin'], path: (f) => `/user/client/${f.org}/status` },
  'GET /user/client/:orgname/cluster/:cluster/status': { pass: ['siteadmin'], path: (f) => `/user/client/${f.org}/cluster/x/status` },
  'POST /user/client/create': { pass: ['siteadmin'], body: () => ({ clientOrg: { orgName: 'x' } }) },
  'POST /user/client/:orgname/add-cluster': { pass: ['siteadmin'], path: (f) => `/user/client/${f.org}/add-cluster`, body: () => ({}) },
  'POST /user/client/:orgname/delete-cluster': {
    pass: ['siteadmin'],
    path: (f) => `/user/client/${f.org}/delete-cluster`,
    body: () => ({}),
  },
  'DELETE /user/client/delete/:id': { pass: ['siteadmin'], path: () => '/user/client/delete/999999' },
  // Metrics proxy (docs/metrics-proxy.md): org admins (admin:org: owners, site admins, a role carrying it)
  // register and unregister; an empty body is 422 for them (through). The auth hook lets the owning organization's
  // members through and answers 401 to everyone else, site admins included.
  'POST /metricsproxy/register': { pass: HOLDERS, body: () => ({}) },
  'POST /metricsproxy/unregister': { pass: HOLDERS, body: () => ({}) },
  'POST /metricsproxy/flavorb/register': { pass: HOLDERS, body: () => ({}) },
  'POST /metricsproxy/flavorb/unregister': { pass: HOLDERS, body: () => ({}) },
  'GET /metricsproxy/auth/:uidcid/*path': {
    pass: MEMBERS_ONLY,
    hub: true,
    refusedWith401: true,
    path: (f) => `/metricsproxy/auth/${f.orgId}.${f.hubUid}/api/v1/query`,
  },
  // Quota and expiry notifications (docs/notifications.md): the site's webhook endpoints, deliveries and mails are the
  // site admins'; an organization's endpoints and deliveries its owners' (and site admins'). A URL that is not
  // https is 422 and an unknown endpoint 404 for those let through, so no row registers or removes a real one.
  'GET /admin/notifications/webhooks': { pass: ['siteadmin'] },
  'POST /admin/notifications/webhooks': {
    pass: ['siteadmin'],
    body: () => ({ url: 'http://hooks.example.com/in', events: ['quota.threshold'] }),
  },
  'PATCH /admin/notifications/webhooks/:id': {
    pass: ['siteadmin'],
    path: () => '/admin/notifications/webhooks/999999',
    body: () => ({ enabled: false }),
  },
  'DELETE /admin/notifications/webhooks/:id': { pass: ['siteadmin'], path: () => '/admin/notifications/webhooks/999999' },
  'GET /admin/notifications/deliveries': { pass: ['siteadmin'] },
  'GET /admin/notifications/mails': { pass: ['siteadmin'] },
  'GET /orgs/:orgname/notifications/webhooks': { pass: OWNERS },
  'POST /orgs/:orgname/notifications/webhooks': {
    pass: OWNERS,
    body: () => ({ url: 'http://hooks.example.com/in', events: ['contract.expiring'] }),
  },
  'PATCH /orgs/:orgname/notifications/webhooks/:id': {
    pass: OWNERS,
    path: (f) => `/orgs/${f.org}/notifications/webhooks/999999`,
    body: () => ({ enabled: true }),
  },
  'DELETE /orgs/:orgname/notifications/webhooks/:id': { pass: OWNERS, path: (f) => `/orgs/${f.org}/notifications/webhooks/999999` },
  'GET /orgs/:orgname/notifications/deliveries': { pass: OWNERS },
  // Console sessions and sign-up (docs/authentication.md, "Console sessions"): each caller acts on its own sessions
  // only (another's or an unknown id is 404, through here); with a token there is no current session (404). Sign-up is
  // open to anyone while registration is enabled, as it is here. Signing in (POST /user/session, HTTP Basic) is
  // played by apps/gateway/test/sessions.test.ts.
  'GET /user/session': { pass: AUTHENTICATED },
  'DELETE /user/session': { pass: AUTHENTICATED },
  'GET /user/sessions': { pass: AUTHENTICATED },
  'DELETE /user/sessions/:id': { pass: AUTHENTICATED, path: () => '/user/sessions/999999' },
  'POST /user/signup': {
    pass: EVERYONE,
    body: (f) => ({ username: `su-${f.org}-${f.me}`, email: `su-${f.org}-${f.me}@example.com`, password: 'signup-password' }),
  },
};

/** The cluster-set rows: reads for members, changes for owners and site admins. */
function hubRows(): Record<string, Row> {
  const hub = (f: Fixture) => `/clusters/${f.org}/hub`;
  const read = (rest: string): Row => ({ pass: MEMBERS, hub: true, path: (f) => `${hub(f)}${rest}` });
  const change = (rest: string, body: unknown): Row => ({ pass: OWNERS, hub: true, path: (f) => `${hub(f)}${rest}`, body: () => body });
  const SET = '/clusters/:owner/:cluster/clustersets/:clusterset';
  return {
    'GET /clusters/:owner/:cluster/clustersets': read('/clustersets'),
    'GET /clusters/:owner/:cluster/available-clusters': read('/available-clusters'),
    'GET /clusters/:owner/:cluster/available-clustersets': read('/available-clustersets?type=client-org'),
    'POST /clusters/:owner/:cluster/clustersets/create': change('/clustersets/create', { clusterSet: 'made' }),
    'POST /clusters/:owner/:cluster/clustersets/delete': change('/clustersets/delete', { clusterSet: 'made' }),
    'POST /clusters/:owner/:cluster/clustersets/add': change('/clustersets/add', { clusterSet: 'made', clusters: ['x'] }),
    'POST /clusters/:owner/:cluster/clustersets/remove': change('/clustersets/remove', { clusterSet: 'made', clusters: ['x'] }),
    [`GET ${SET}/clusters`]: read('/clustersets/made/clusters'),
    [`GET ${SET}/clusterlist`]: read('/clustersets/made/clusterlist'),
    [`GET ${SET}/auth-info`]: read('/clustersets/made/auth-info'),
    'GET /clusters/:owner/:cluster/bound-namespaces': read('/bound-namespaces'),
    'POST /clusters/:owner/:cluster/bound-namespaces/bind': change('/bound-namespaces/bind', { clusterSet: 'made', namespace: 'default' }),
    'POST /clusters/:owner/:cluster/bound-namespaces/unbind': change('/bound-namespaces/unbind', {
      clusterSet: 'made',
      namespace: 'default',
    }),
    [`GET ${SET}/featuresets`]: read('/clustersets/made/featuresets'),
    [`POST ${SET}/install-featureset`]: change('/clustersets/made/install-featureset', { featureSet: 'opscenter-core' }),
    [`POST ${SET}/disable-featureset`]: change('/clustersets/made/disable-featureset', {
      clusterSet: 'made',
      featureSet: 'opscenter-core',
    }),
    [`POST ${SET}/:managedCluster/update-featureset`]: change('/clustersets/made/x/update-featureset', { featureSet: 'opscenter-core' }),
    [`GET ${SET}/sync-status/all-features`]: read('/clustersets/made/sync-status/all-features'),
    [`GET ${SET}/sync-status/opscenter-features-version`]: read('/clustersets/made/sync-status/opscenter-features-version'),
    [`GET ${SET}/sync-status/:feature`]: read('/clustersets/made/sync-status/platform-agent'),
    [`GET ${SET}/auto-update/check`]: read('/clustersets/made/auto-update/check'),
    [`POST ${SET}/auto-update`]: change('/clustersets/made/auto-update', undefined),
  };
}

/**
 * The routes the matrix covers (every row a token may call under these paths), as the gateway registers
 * them on a hosted, billing-enabled dev deployment.
 */
function sectionRoutes() {
  const env = { DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev', BILLING_ENABLED: 'true' };
  return registeredRoutesOn(env).filter(
    (r) =>
      /^\/(admin|authz|branding|allowed-domains|disable-registration|orgs|teams|contracts|user\/contracts|user\/orgs|users\/:username\/orgs|user\/license-proxy|user\/sessions?|user\/signup|license|register|licenses|dashboard|dbaas|user\/clients?|clusters\/:owner\/:cluster|metricsproxy)(\/|$)/.test(
        r.path,
      ) &&
      // `:action` catch-alls only answer 400 for unknown actions; the named actions are in the table.
      !r.path.endsWith('/:action') &&
      // HTTP Basic rows take no token: their own tests play their callers (apps/gateway/test/sessions.test.ts signs in).
      r.auth !== 'basic',
  );
}

const splitName = (name: string) => {
  const colon = name.lastIndexOf(':');
  return { namespace: name.slice(colon + 1), action: name.slice(0, colon) };
};

describe('authorization matrix of the route table', () => {
  let t: TestPlatform;
  let next = 0;
  let catalog: { namespace: string; action: string }[];
  const routes = sectionRoutes();
  /** The permission a row's holder gets through their custom role. */
  const grantOf = (route: (typeof routes)[number], row: Row) => row.grant ?? route.requires?.at(-1)?.permission;
  const isRead = (method: string) => method === 'get' || method === 'head';

  beforeAll(async () => {
    // The spec's relations as written: no administrative organization, so POST /branding follows
    // edit_branding_options:org in any organization (the default PLATFORM_ADMIN_ORG: apps/gateway/test/site-settings.test.ts).
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev', PLATFORM_ADMIN_ORG: 'none', BILLING_ENABLED: 'true' });
    for (const who of ['owner', 'member', 'holder', 'outsider']) await t.signUp(who);
    // Any org will do for reading the catalog.
    await t.api('owner', 'POST', '/orgs', { username: 'catalog' });
    catalog = (await t.api('owner', 'GET', '/authz/roles/available_permissions?org=catalog')).body.permissions;
    // Registration arrives closed; the sign-up row is about who may call it once a site admin opened it.
    expect((await t.api('root', 'POST', '/disable-registration?org=catalog', { disableRegistration: false })).status).toBe(200);
    await importFixtures(rowFixtures());
  }, 120_000);
  afterAll(() => t?.stop());

  /**
   * Fixture organizations are imported ahead (docs/import.md), in a few requests, not made call by call (an organization,
   * two teams, two members and a role: seven writes each, most of the file's time): the import writes the rows and
   * tuples those routes write, so every route meets the same organization. Those not yet handed out, by the grant of
   * their role ('' for none).
   */
  const imported = new Map<string, { org: string; orgId: number }[]>();

  /**
   * Imports one organization per grant given (repeats make several), a few at a time: each request must end inside
   * the gateway's deadline (BACKEND_DEADLINE_MS) on a busy machine too, and each organization's role is a call to authz.
   */
  async function importFixtures(grants: (string | undefined)[]): Promise<void> {
    const wanted = grants.map((grant) => ({ org: `mx${next++}`, grant }));
    for (let at = 0; at < wanted.length; at += IMPORT_BATCH) {
      const batch = wanted.slice(at, at + IMPORT_BATCH);
      const organizations = batch.map(({ org, grant }) => {
        const permission = grant ? splitName(grant) : undefined;
        const assignable = permission && catalog.some((p) => p.namespace === permission.namespace && p.action === permission.action);
        return {
          name: org,
          owners: ['owner'],
          teams: [
            { name: 'devs', type: 'general', members: ['member'] },
            { name: 'holders', type: 'general', members: ['holder'], roles: ['grant'] },
          ],
          roles: [{ name: 'grant', permissions: assignable ? [permission] : [] }],
        };
      });
      const answer = await t.api('root', 'POST', '/admin/orgs/import', { organizations });
      expect(answer.status).toBe(200);
      const results = answer.body.results as { name: string; outcome: string; id: number; errors: string[] }[];
      expect(results.filter((r) => r.outcome !== 'created')).toEqual([]);
      results.forEach((r, i) => {
        const key = batch[i].grant ?? '';
        let left = imported.get(key);
        if (!left) imported.set(key, (left = []));
        left.push({ org: r.name, orgId: r.id });
      });
    }
  }

  /**
   * An organization no other caller has had: owner; team devs with member; team holders with holder, whose custom role
   * carries `grant`; with `contract`, a contract of the organization (made by the site admin) with one cluster bound;
   * with `hub`, its hub cluster.
   */
  async function fixture(me: Actor, grant: string | undefined, contract = false, hub = false): Promise<Fixture> {
    if (!imported.get(grant ?? '')?.length) await importFixtures([grant]);
    const { org, orgId } = imported.get(grant ?? '')!.pop()!;
    const [teams, made, hubUid] = await Promise.all([
      t.api('owner', 'GET', `/orgs/${org}/teams`),
      contract ? contractOf(org) : { contract: 0, ccID: 0 },
      hub ? hubOf(org) : '',
    ]);
    const team = (name: string) => (teams.body as { id: number; name: string; role_ids?: number[] }[]).find((x) => x.name === name)!;
    return { org, orgId, devs: team('devs').id, roleId: team('holders').role_ids![0], me, ids: t.ids, ...made, hubUid };
  }

  /** A contract of the organization, made by the site admin, with one cluster bound. */
  async function contractOf(org: string): Promise<{ contract: number; ccID: number }> {
    const end = String(Math.floor(Date.now() / 1000) + YEAR);
    const form = formOf({ products: 'productdb', end });
    form.append('document', new Blob(['the signed contract']), 'contract.txt');
    const made = await t.send('root', 'POST', `/contracts?org=${org}`, form);
    expect(made.status).toBe(201);
    const contract = made.body[0].id;
    const bound = await t.api('root', 'POST', `/contracts/${contract}/clusters?org=${org}`, [{ cluster: CLUSTER }]);
    expect(bound.status).toBe(201);
    return { contract, ccID: bound.body[0].id };
  }

  /** The UID of the organization's hub cluster `hub`, enrolled by its owner. */
  async function hubOf(org: string): Promise<string> {
    const enrolled = await t.api('owner', 'POST', `/orgs/${org}/clusters`, { name: 'hub' });
    expect(enrolled.status).toBe(201);
    return enrolled.body.cluster.uid;
  }

  /**
   * Which organization a caller of a row takes (who shares one, and why that is safe: the header): every caller of a
   * GET row the one shared by the GET rows of the same grant, contract and hub; on a write row, each caller it lets
   * through one of its own, and the callers it refuses one between them.
   */
  function takes(route: (typeof routes)[number], row: Row, me: Actor): 'shared' | 'own' | 'refused' {
    if (isRead(route.method)) return 'shared';
    return row.pass.includes(me) ? 'own' : 'refused';
  }

  /** The grants of the organizations the rows below take, one per organization, as `takes` hands them out. */
  function rowFixtures(): (string | undefined)[] {
    const grants: (string | undefined)[] = [];
    const shared = new Set<string>();
    for (const route of routes) {
      const row = MATRIX[`${route.method.toUpperCase()} ${route.path}`];
      if (!row) continue;
      const grant = grantOf(route, row);
      const taken = ACTORS.map((me) => takes(route, row, me));
      const key = JSON.stringify([grant ?? null, Boolean(row.contract), Boolean(row.hub)]);
      if (taken.includes('shared') && !shared.has(key)) {
        grants.push(grant);
        shared.add(key);
      }
      for (const one of taken) if (one === 'own') grants.push(grant);
      if (taken.includes('refused')) grants.push(grant);
    }
    return grants;
  }

  /** The organizations GET rows share (see the header), one per (grant, contract, hub), made on first use. */
  const readOnly = new Map<string, Promise<Fixture>>();
  function sharedFixture(grant: string | undefined, contract = false, hub = false): Promise<Fixture> {
    const key = JSON.stringify([grant ?? null, contract, hub]);
    let made = readOnly.get(key);
    if (!made) readOnly.set(key, (made = fixture('anonymous', grant, contract, hub)));
    return made;
  }

  it('covers every registered route under the paths it matches', () => {
    const registered = sectionRoutes().map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(registered.filter((r) => !MATRIX[r])).toEqual([]);
    expect(Object.keys(MATRIX).filter((r) => !registered.includes(r))).toEqual([]);
  });

  it('keeps the Owners team to owners and site admins: a role granting team-member changes does not make owners', async () => {
    const f = await fixture('holder', 'add:team-member');
    await t.api('owner', 'PUT', `/authz/roles/${f.roleId}?org=${f.org}`, {
      permissions: [
        { namespace: 'team-member', action: 'add' },
        { namespace: 'team-member', action: 'remove' },
      ],
    });
    const teams = (await t.api('owner', 'GET', `/orgs/${f.org}/teams`)).body as { id: number; permission: string }[];
    const owners = teams.find((team) => team.permission === 'owner')!.id;

    expect((await t.api('holder', 'PUT', `/teams/${f.devs}/members/outsider`)).status).toBe(204);
    expect((await t.api('holder', 'PUT', `/teams/${owners}/members/holder`)).status).toBe(403);
    expect((await t.api('holder', 'POST', `/orgs/${f.org}/teams/${owners}/action/add?uid=${t.ids.holder}`)).status).toBe(403);
    expect((await t.api('holder', 'DELETE', `/teams/${owners}/members/owner`)).status).toBe(403);
    expect((await t.api('holder', 'DELETE', `/orgs/${f.org}/members/owner`)).status).toBe(403);
    expect((await t.api('holder', 'GET', `/orgs/${f.org}/is-owner`)).status).toBe(403);

    expect((await t.api('owner', 'PUT', `/teams/${owners}/members/holder`)).status).toBe(204);
    expect((await t.api('holder', 'GET', `/orgs/${f.org}/is-owner`)).status).toBe(200);
  });

  it('does not let a plain member give themselves a custom role by joining the team that carries it', async () => {
    const f = await fixture('member', undefined);
    const ops = (await t.api('owner', 'POST', `/orgs/${f.org}/teams`, { name: 'ops', type: 'general' })).body.id;
    const powerful = await t.api('owner', 'POST', `/authz/roles?org=${f.org}`, {
      name: 'powerful',
      permissions: [
        { namespace: 'org', action: 'edit' },
        { namespace: 'org', action: 'admin' },
        { namespace: 'team-member', action: 'add' },
      ],
      teamIDs: [ops],
    });
    expect(powerful.status).toBe(201);
    expect((await t.api('member', 'PATCH', `/orgs/${f.org}`, { description: 'mine now' })).status).toBe(403);
    expect((await t.api('member', 'POST', `/orgs/${f.org}/teams/${ops}/action/join?uid=${t.ids.member}`)).status).toBe(403);
    expect((await t.api('owner', 'GET', `/teams/${ops}/members`)).body).toEqual([]);
    expect((await t.api('member', 'PATCH', `/orgs/${f.org}`, { description: 'mine now' })).status).toBe(403);
    expect((await t.api('member', 'PUT', `/teams/${f.devs}/members/outsider`)).status).toBe(403);
  });

  /** A role of the fixture's organization, on no team, carrying what the holders' role does not. */
  async function powerfulRole(f: Fixture): Promise<number> {
    const made = await t.api('owner', 'POST', `/authz/roles?org=${f.org}`, {
      name: 'powerful',
      permissions: [
        { namespace: 'org', action: 'edit' },
        { namespace: 'org', action: 'create_role' },
        { namespace: 'bus-token', action: 'list' },
      ],
    });
    expect(made.status).toBe(201);
    return made.body.id;
  }

  it('does not let a holder of edit:team give a team a custom role carrying more than they hold', async () => {
    const f = await fixture('holder', 'edit:team');
    const powerful = await powerfulRole(f);
    const teams = (await t.api('owner', 'GET', `/orgs/${f.org}/teams`)).body as { id: number; name: string }[];
    const holders = teams.find((team) => team.name === 'holders')!.id;

    const refused = await t.api('holder', 'PATCH', `/teams/${f.devs}`, { name: 'devs', assignedRoleIDs: [powerful] });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('create_role:org');
    const own = { name: 'holders', assignedRoleIDs: [f.roleId, powerful] };
    expect((await t.api('holder', 'PATCH', `/teams/${holders}`, own)).status).toBe(403);
    expect((await t.api('owner', 'GET', `/teams/${f.devs}`)).body).not.toHaveProperty('role_ids');
    expect((await t.api('owner', 'GET', `/teams/${holders}`)).body.role_ids).toEqual([f.roleId]);
    expect((await t.api('holder', 'POST', `/authz/roles?org=${f.org}`, { name: 'mine', permissions: [] })).status).toBe(403);
    expect((await t.api('holder', 'GET', `/orgs/${f.org}/tokens/bus-tokens`)).status).toBe(403);

    // Its own role the holder may give; owners and site admins may give any.
    expect((await t.api('holder', 'PATCH', `/teams/${f.devs}`, { name: 'devs', assignedRoleIDs: [f.roleId] })).status).toBe(200);
    expect((await t.api('root', 'PATCH', `/teams/${f.devs}`, { name: 'devs', assignedRoleIDs: [powerful] })).status).toBe(200);
    expect((await t.api('owner', 'PATCH', `/teams/${holders}`, own)).status).toBe(200);
    expect((await t.api('holder', 'GET', `/orgs/${f.org}/tokens/bus-tokens`)).status).not.toBe(403);
  });

  it('does not let a holder of create:team create a team carrying a custom role beyond them', async () => {
    const f = await fixture('holder', 'create:team');
    const powerful = await powerfulRole(f);
    const create = (who: string, name: string, roleIds: number[]) =>
      t.api(who, 'POST', `/orgs/${f.org}/teams`, { name, type: 'general', assignedRoleIDs: roleIds });

    const refused = await create('holder', 'mine', [powerful]);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain('edit:org');
    expect((await create('holder', 'mine', [f.roleId, powerful])).status).toBe(403);
    const names = (await t.api('owner', 'GET', `/orgs/${f.org}/teams`)).body.map((team: { name: string }) => team.name);
    expect(names).not.toContain('mine');

    expect((await create('holder', 'mine', [f.roleId])).status).toBe(201);
    expect((await create('owner', 'owned', [powerful])).status).toBe(201);
    expect((await create('root', 'administered', [powerful])).status).toBe(201);
  });

  /** A token of a new service account: the organization's (made by its owner), or a site-wide site admin one. */
  async function serviceAccountToken(name: string, org?: string): Promise<string> {
    const base = org ? `/orgs/${org}/service-accounts` : '/admin/service-accounts';
    const made = await t.api(org ? 'owner' : 'root', 'POST', base, org ? { name } : { name, site_admin: true });
    expect(made.status).toBe(201);
    const token = await t.api(org ? 'owner' : 'root', 'POST', `${base}/${made.body.id}/tokens`, { name: 'matrix' });
    expect(token.status).toBe(201);
    return token.body.sha1;
  }

  it("shows a user's e-mail to the user and site admins only, on every door that presents users, REST and gRPC", async () => {
    const f = await fixture('member', undefined);
    // One member keeps the address private (Gitea's keep_email_private), one does not: others see neither.
    if (!t.ids.keeper) await t.signUp('keeper');
    expect((await t.api('keeper', 'PATCH', '/user/settings', { hide_email: true })).status).toBe(200);
    expect((await t.api('owner', 'PUT', `/teams/${f.devs}/members/keeper`)).status).toBe(204);
    for (const who of ['member', 'keeper']) expect((await t.api(who, 'PUT', `/orgs/${f.org}/public_members/${who}`)).status).toBe(204);
    const targets = ['member', 'keeper'];
    type Seen = { login: string; email: string };
    const one = (reply: { status: number; body: any }, login = (b: any) => b.login): Seen[] | undefined =>
      reply.status === 200 ? [{ login: login(reply.body), email: reply.body.email }] : undefined;
    const list = (reply: { status: number; body: any }): Seen[] | undefined => (reply.status === 200 ? reply.body : undefined);
    const each = async (get: (u: string) => Promise<Seen[] | undefined>) => (await Promise.all(targets.map(get))).flatMap((x) => x ?? []);
    const doors: Record<string, (who: string | undefined) => Promise<Seen[] | undefined>> = {
      'GET /orgs/{org}/user/{u}': (who) => each(async (u) => one(await t.api(who, 'GET', `/orgs/${f.org}/user/${u}`), (b) => b.name)),
      'GET /orgs/{org}/members': async (who) => list(await t.api(who, 'GET', `/orgs/${f.org}/members`)),
      'GET /orgs/{org}/public_members': async (who) => list(await t.api(who, 'GET', `/orgs/${f.org}/public_members`)),
      'GET /teams/{id}/members': async (who) => list(await t.api(who, 'GET', `/teams/${f.devs}/members`)),
      'GET /teams/{id}/members/{u}': (who) => each(async (u) => one(await t.api(who, 'GET', `/teams/${f.devs}/members/${u}`))),
      'GET /users/search': (who) =>
        each(async (u) => {
          const reply = await t.api(who, 'GET', `/users/search?uid=${t.ids[u]}`);
          return reply.status === 200 ? reply.body.data : undefined;
        }),
      'GET /users/{u}': (who) => each(async (u) => one(await t.api(who, 'GET', `/users/${u}`))),
      'GET /admin/users': (who) => each(async (u) => list(await t.api(who, 'GET', `/admin/users?q=${u}`))),
    };
    const sa = await serviceAccountToken(`${f.org}-reader`, f.org);
    const siteSa = await serviceAccountToken(`${f.org}-site-reader`);
    const grpcMembers = async (token: string, method: 'listMembers' | 'listTeamMembers') => {
      const request =
        method === 'listMembers'
          ? orgsTeamsOrgsV1.ListMembersRequest.fromPartial({ orgId: f.orgId })
          : orgsTeamsOrgsV1.ListTeamMembersRequest.fromPartial({ teamId: f.devs });
      const answer = await callAsStranger(t.grpcAddress('orgs-teams'), orgsTeamsOrgsV1.OrganizationsServiceService, method, request, {
        authorization: `Bearer ${token}`,
      });
      expect(answer).toMatchObject({ code: grpcStatus.OK });
      return (answer.response as { members: Seen[] }).members;
    };

    const wrong: string[] = [];
    /** What each viewer saw of the two members, door by door: `door viewer login` -> `shown` or `hidden`. */
    const saw = new Map<string, string>();
    const note = (door: string, viewer: string, seen: Seen[] | undefined, sees: (login: string) => boolean) => {
      for (const u of (seen ?? []).filter((x) => targets.includes(x.login))) {
        const expected = sees(u.login) ? `${u.login}@example.com` : '';
        if (u.email !== expected)
          wrong.push(`${door} as ${viewer}: ${u.login}'s e-mail ${JSON.stringify(u.email)}, expected ${JSON.stringify(expected)}`);
        saw.set(`${door} ${viewer} ${u.login}`, u.email ? 'shown' : 'hidden');
      }
    };
    for (const [door, get] of Object.entries(doors))
      for (const viewer of ['anonymous', 'outsider', 'owner', 'member', 'keeper', 'root'])
        note(door, viewer, await get(viewer === 'anonymous' ? undefined : viewer), (login) => viewer === login || viewer === 'root');
    for (const method of ['listMembers', 'listTeamMembers'] as const) {
      note(`gRPC ${method}`, 'service account', await grpcMembers(sa, method), () => false);
      note(`gRPC ${method}`, 'site-admin service account', await grpcMembers(siteSa, method), () => true);
    }
    expect(wrong).toEqual([]);

    // Every door was seen through: by site admins with the addresses, by another signed-in caller without them.
    for (const door of Object.keys(doors))
      for (const login of targets) {
        expect({ door, login, root: saw.get(`${door} root ${login}`) }).toEqual({ door, login, root: 'shown' });
        if (door !== 'GET /admin/users')
          expect({ door, login, owner: saw.get(`${door} owner ${login}`) }).toEqual({ door, login, owner: 'hidden' });
      }
    for (const method of ['listMembers', 'listTeamMembers'])
      for (const login of targets) expect(saw.get(`gRPC ${method} service account ${login}`)).toBe('hidden');
  });

  it("refuses a service account's check that adds another organization's team, and answers one adding its own organization's", async () => {
    // Organization A is the fixture's (its team devs holds member); organization B is the outsider's, with a team of its own.
    const a = await fixture('member', undefined);
    const b = `${a.org}-b`;
    const made = await t.api('owner', 'POST', '/orgs', { username: b });
    expect(made.status).toBe(201);
    const ops = (await t.api('owner', 'POST', `/orgs/${b}/teams`, { name: 'ops', type: 'general' })).body.id;
    expect((await t.api('owner', 'PUT', `/teams/${ops}/members/outsider`)).status).toBe(204);
    const token = await serviceAccountToken(`${b}-checker`, b);
    const check = (user: string, team: number) =>
      callAsStranger(
        t.grpcAddress('authz'),
        authzV1.AuthzServiceService,
        'check',
        {
          tuple: { user: `user:${t.ids[user]}`, relation: 'member', object: `organization:${made.body.id}` },
          contextualTuples: [{ user: `team:${team}#member`, relation: 'member', object: `organization:${made.body.id}` }],
        },
        { authorization: `Bearer ${token}` },
      );

    // Whether member is in A's team devs is not B's to learn: the whole question is refused.
    expect(await check('member', a.devs)).toMatchObject({ code: grpcStatus.PERMISSION_DENIED });
    const batch = await callAsStranger(
      t.grpcAddress('authz'),
      authzV1.AuthzServiceService,
      'batchCheck',
      {
        checks: [
          {
            tuple: { user: `user:${t.ids.member}`, relation: 'member', object: `organization:${made.body.id}` },
            contextualTuples: [{ user: `team:${a.devs}#member`, relation: 'member', object: `organization:${made.body.id}` }],
          },
        ],
      },
      { authorization: `Bearer ${token}` },
    );
    expect(batch).toMatchObject({ code: grpcStatus.PERMISSION_DENIED });
    // Its own organization's team it may add, and it is answered either way.
    expect(await check('outsider', ops)).toMatchObject({ code: grpcStatus.OK, response: { allowed: true } });
    expect(await check('member', ops)).toMatchObject({ code: grpcStatus.OK, response: { allowed: false } });
  });

  for (const route of routes) {
    const key = `${route.method.toUpperCase()} ${route.path}`;
    const row = MATRIX[key];
    if (!row) continue;
    it(`${key}: ${row.pass.join(', ')} get through; the others are refused`, async () => {
      const outcomes: string[] = [];
      const method = route.method.toUpperCase();
      const grant = grantOf(route, row);
      let refusals: Promise<Fixture> | undefined;
      const organizationOf = async (me: Actor): Promise<Fixture> => {
        const taken = takes(route, row, me);
        if (taken === 'shared') return { ...(await sharedFixture(grant, row.contract, row.hub)), me };
        if (taken === 'own') return fixture(me, grant, row.contract, row.hub);
        return { ...(await (refusals ??= fixture('anonymous', grant, row.contract, row.hub))), me };
      };
      // The callers at once: the platform serves concurrent callers in production anyway (one after the other, the
      // matrix took 7 minutes).
      await Promise.all(
        ACTORS.map(async (me) => {
          const f = await organizationOf(me);
          let path = row.path ? row.path(f) : route.path.replace(':orgname', f.org);
          if (route.org) path += `${path.includes('?') ? '&' : '?'}org=${f.org}`;
          const who = me === 'anonymous' ? undefined : login(me);
          const { status } = row.form ? await t.send(who, method, path, row.form(f)) : await t.api(who, method, path, row.body?.(f));
          const expected = row.pass.includes(me)
            ? 'through'
            : (me === 'anonymous' && route.auth !== 'public') || row.refusedWith401
              ? '401'
              : '403';
          const got = status === 401 || status === 403 ? String(status) : status >= 500 ? `5xx(${status})` : 'through';
          if (got !== expected) outcomes.push(`${me}: expected ${expected}, got ${status}`);
        }),
      );
      expect(outcomes.sort()).toEqual([]);
    });
  }
});

/**
 * The table against the rows (apps/gateway/src/sections), where every check made for a route is declared: a row
 * that declares a requirement or a check is in the table, or names the test that plays its callers (HTTP Basic,
 * signed URLs); what the table refuses, the row declares; a row whose requirements are all the site's lets site
 * admins only through. The table's runs above then make every declared check on every row.
 */
describe('the authorization matrix against the route rows', () => {
  const keyOf = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;
  const COVERED_ELSEWHERE: Record<string, string> = {
    'POST /users/:username/tokens': 'apps/gateway/test/identity.test.ts: another user’s tokens are 403 (HTTP Basic)',
    'GET /users/:username/tokens': 'apps/gateway/test/identity.test.ts: another user’s tokens are 403 (HTTP Basic)',
    'DELETE /users/:username/tokens/:id': 'apps/gateway/test/identity.test.ts: another user’s tokens are 403 (HTTP Basic)',
    'GET /objects/*key': 'apps/gateway/test/avatars.test.ts: a missing, forged, tampered or expired signature is 403',
  };
  const declares = (r: ReturnType<typeof sectionRoutes>[number]) => Boolean(r.requires?.length || r.checks?.length || r.gives);

  it('has every row that declares a requirement or a check, or names the test covering it', () => {
    const all = registeredRoutesOn({ DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev', BILLING_ENABLED: 'true' });
    expect(all.filter((r) => declares(r) && !MATRIX[keyOf(r)] && !COVERED_ELSEWHERE[keyOf(r)]).map(keyOf)).toEqual([]);
  });

  it('refuses an authenticated caller only where the row declares a requirement, a check or an `org` context', () => {
    const undeclared = sectionRoutes().filter((r) => {
      const row = MATRIX[keyOf(r)];
      return row && AUTHENTICATED.some((a) => !row.pass.includes(a)) && !declares(r) && r.org !== 'required';
    });
    expect(undeclared.map(keyOf)).toEqual([]);
  });

  it('lets only site admins through a row whose requirements are all on the site', () => {
    const siteOnly = sectionRoutes().filter((r) => r.requires?.length && r.requires.every((q) => q.on === 'site') && !r.checks?.length);
    expect(siteOnly.filter((r) => MATRIX[keyOf(r)]?.pass.join() !== 'siteadmin').map(keyOf)).toEqual([]);
  });
});
