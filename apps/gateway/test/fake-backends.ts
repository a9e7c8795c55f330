import { AUTHZ_SERVICES } from '@platform/authz-client';
import { BILLING_DASHBOARD_SERVICES } from '@platform/billing-dashboard-client';
import { CLUSTERS_SERVICES } from '@platform/clusters-client';
import { CONTRACTS_LICENSING_SERVICES } from '@platform/contracts-licensing-client';
import { MARKETPLACE_LISTENER_SERVICES } from '@platform/marketplace-listener-client';
import { METRICSPROXY_SERVICES } from '@platform/metricsproxy-client';
import { NotAuthenticatedError, NotFoundError } from '@platform/errors';
import { ORGS_TEAMS_SERVICES } from '@platform/orgs-teams-client';
import type { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { startFakeApp, type FakeApp, type FakeHandlers } from '@platform/service-testing';
import type { Backends } from '../src/backends';

/** Every backend app's services and the variable the gateway finds it by. */
const APPS = {
  authz: { services: AUTHZ_SERVICES, env: 'AUTHZ_GRPC_ADDR', name: 'authz' },
  orgsTeams: { services: ORGS_TEAMS_SERVICES, env: 'ORGS_TEAMS_GRPC_ADDR', name: 'orgs-teams' },
  contractsLicensing: { services: CONTRACTS_LICENSING_SERVICES, env: 'CONTRACTS_LICENSING_GRPC_ADDR', name: 'contracts-licensing' },
  billingDashboard: { services: BILLING_DASHBOARD_SERVICES, env: 'BILLING_DASHBOARD_GRPC_ADDR', name: 'billing-dashboard' },
  metricsproxy: { services: METRICSPROXY_SERVICES, env: 'METRICSPROXY_GRPC_ADDR', name: 'metricsproxy' },
  marketplaceListener: { services: MARKETPLACE_LISTENER_SERVICES, env: 'MARKETPLACE_LISTENER_GRPC_ADDR', name: 'marketplace-listener' },
  clusters: { services: CLUSTERS_SERVICES, env: 'CLUSTERS_GRPC_ADDR', name: 'clusters' },
} as const satisfies Record<keyof Backends, unknown>;
type Apps = typeof APPS;

/** The answers a test gives each backend, typed by its services (`orgsTeams.organizations.getOrg`). */
export type FakeBackendHandlers = { [B in keyof Apps]?: FakeHandlers<Apps[B]['services']> };

/** Stand-ins for every backend app of the gateway: each a FakeApp, and the settings that point the gateway at them. */
export type FakeBackends = { [B in keyof Apps]: FakeApp<Apps[B]['services']> } & {
  /** AUTHZ_GRPC_ADDR and the others, for startTestGateway. */
  env: Record<string, string>;
  /** Every stand-in back to its first answers, its calls forgotten. */
  reset(): void;
  close(): Promise<void>;
};

/**
 * Starts a stand-in for each of the seven backend apps (every method answered: empty by default, as `handlers` say
 * where given), so a gateway route runs in the unit tier against its route table, schema and authorization, with
 * what each backend is asked recorded.
 */
export async function startFakeBackends(handlers: FakeBackendHandlers = {}): Promise<FakeBackends> {
  const entries = await Promise.all(
    (Object.keys(APPS) as (keyof Apps)[]).map(
      async (key) => [key, await startFakeApp(APPS[key].name, APPS[key].services, (handlers[key] ?? {}) as never)] as const,
    ),
  );
  const apps = Object.fromEntries(entries) as { [B in keyof Apps]: FakeApp<Apps[B]['services']> };
  return {
    ...apps,
    env: Object.fromEntries(entries.map(([key, app]) => [APPS[key].env, app.address])),
    reset: () => entries.forEach(([, app]) => app.reset()),
    close: async () => {
      await Promise.all(entries.map(([, app]) => app.close()));
    },
  };
}

/** The users a test knows, by login (or as a list). */
type KnownUsers = Record<string, orgsTeamsV1.User> | orgsTeamsV1.User[];
const byLogin = (users: KnownUsers) => (Array.isArray(users) ? Object.fromEntries(users.map((u) => [u.login, u])) : users);

/**
 * orgs-teams' `authenticate` as most gateway tests answer it: a token is one of `users`' login, with every scope;
 * anything else is refused as an unknown token, as orgs-teams refuses it.
 */
export function tokenIsLogin(users: KnownUsers) {
  const known = byLogin(users);
  return async ({ token }: orgsTeamsV1.AuthenticateRequest): Promise<orgsTeamsV1.AuthenticateResponse> => {
    const user = known[token];
    if (!user) throw new NotAuthenticatedError('invalid token');
    return { user, tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] };
  };
}

/** orgs-teams' `getUser` by login among `users`, 404 for any other, as orgs-teams answers it. */
export function userByLogin(users: KnownUsers) {
  const known = byLogin(users);
  return async ({ login }: orgsTeamsV1.GetUserRequest): Promise<orgsTeamsV1.User> => {
    const user = known[login];
    if (!user) throw new NotFoundError(`user ${login} does not exist`);
    return user;
  };
}

/** Whether the user `userId` holds `permission` on the object `objectId` (an organization's id; 0 for the site). */
export type Holds = (userId: number, permission: string, objectId: number) => boolean;

/** What most route tests let callers do: `admin` holds everything, `owner` every permission of `org` but the site's. */
export function adminAndOwner(admin: orgsTeamsV1.User, owner: orgsTeamsV1.User, org: orgsTeamsOrgsV1.Organization): Holds {
  return (userId, permission, objectId) =>
    userId === admin.id || (!permission.endsWith(':site_admin') && userId === owner.id && objectId === org.id);
}

/**
 * orgs-teams' and authz's answers as most route tests give them: a token is one of `users`' login (`tokenIsLogin`),
 * a user is found by login (`userByLogin`), `orgs` are the organizations there are (any other name 404, as orgs-teams
 * answers, and a private one 404 to a viewer who may not act for it), and authz allows what `holds` says. Spread into
 * startFakeBackends' handlers beside the other backends' (and other services of orgs-teams and authz beside these).
 */
export function fakeOrgAndCaller(users: KnownUsers, orgs: orgsTeamsOrgsV1.Organization | orgsTeamsOrgsV1.Organization[], holds: Holds) {
  const known = [orgs].flat();
  return {
    orgsTeams: {
      identity: { authenticate: tokenIsLogin(users), getUser: userByLogin(users) },
      organizations: {
        getOrg: async ({ name, viewerId }: orgsTeamsOrgsV1.GetOrgRequest) => {
          const org = known.find((o) => o.username === name);
          if (!org || (org.visibility === 'private' && !holds(viewerId, 'access:org', org.id)))
            throw new NotFoundError(`organization ${name} does not exist`);
          return org;
        },
      },
    },
    authz: {
      authz: {
        checkPermission: async ({ userId, permission, objectId }: { userId: number; permission: string; objectId: number }) => ({
          allowed: holds(userId, permission, objectId),
          dependsOn: [],
        }),
      },
    },
  } satisfies FakeBackendHandlers;
}
