import { type AUTHZ_KEPT, authzClients, type AuthzClients } from '@platform/authz-client';
import { type BILLING_DASHBOARD_KEPT, billingDashboardClients, type BillingDashboardClients } from '@platform/billing-dashboard-client';
import { type CLUSTERS_KEPT, clustersClients, type ClustersClients } from '@platform/clusters-client';
import {
  type CONTRACTS_LICENSING_KEPT,
  contractsLicensingClients,
  type ContractsLicensingClients,
} from '@platform/contracts-licensing-client';
import {
  MARKETPLACE_LISTENER_KEPT,
  marketplaceListenerClients,
  type MarketplaceListenerClients,
} from '@platform/marketplace-listener-client';
import { type METRICSPROXY_KEPT, metricsproxyClients, type MetricsproxyClients } from '@platform/metricsproxy-client';
import { type ORGS_TEAMS_KEPT, orgsTeamsClients, type OrgsTeamsClients, type OrgsTeamsReadModel } from '@platform/orgs-teams-client';
import { allOf, type CallDoor, type KeptDoor } from '@platform/bus';
import { type CallOptions, type PromiseClient } from '@platform/service-kit';
import type { GatewayConfig } from './config';

/** The gRPC clients of every backend app, grouped by app, named after the app's gRPC services. */
export interface Backends {
  authz: AuthzClients;
  orgsTeams: OrgsTeamsClients;
  contractsLicensing: ContractsLicensingClients;
  billingDashboard: BillingDashboardClients;
  metricsproxy: MetricsproxyClients;
  marketplaceListener: MarketplaceListenerClients;
  clusters: ClustersClients;
}

/**
 * What each backend's owner keeps of its answers for the gateway, by backend (their client libraries' `*_KEPT`): the
 * reads a handler makes through `ctx.kept`, and the only ones it may not make through `ctx.backends`.
 */
type KeptReads = {
  authz: typeof AUTHZ_KEPT;
  orgsTeams: typeof ORGS_TEAMS_KEPT;
  contractsLicensing: typeof CONTRACTS_LICENSING_KEPT;
  billingDashboard: typeof BILLING_DASHBOARD_KEPT;
  metricsproxy: typeof METRICSPROXY_KEPT;
  marketplaceListener: typeof MARKETPLACE_LISTENER_KEPT;
  clusters: typeof CLUSTERS_KEPT;
};

/**
 * The door a handler reads kept state through (`ctx.kept.<backend>.<service>.<read>`): the backends' read models, each
 * answer served from what the gateway keeps once the request's fence has passed, or asked and kept. "Go to definition"
 * on a read reaches the owner's rule.
 */
export type Kept = { readonly [B in keyof Backends]: KeptDoor<Backends[B], KeptReads[B]> };

/** The door a handler calls a backend through (`ctx.backends`): every method but the kept reads, always asked. */
export type Calls = { readonly [B in keyof Backends]: CallDoor<Backends[B], KeptReads[B]> };

/** The backend apps; a route names the one answering it, so only its routes answer 503 when it is down. */
export const BACKEND_APPS = {
  authz: 'authz',
  'orgs-teams': 'orgsTeams',
  'contracts-licensing': 'contractsLicensing',
  'billing-dashboard': 'billingDashboard',
  metricsproxy: 'metricsproxy',
  'marketplace-listener': 'marketplaceListener',
  clusters: 'clusters',
} as const satisfies Record<string, keyof Backends>;
export type BackendName = keyof typeof BACKEND_APPS;

/**
 * Opens a channel to each backend; channels connect lazily and reconnect by themselves. With `kept`, the clients answer
 * from their owners' read models (`@platform/*-client`): `readModel` is what the gateway then makes follow its bus, and
 * how it forgets at once the tokens of accounts it changed.
 */
export function connectBackends(config: GatewayConfig, kept = false): { backends: Backends; readModel: OrgsTeamsReadModel } {
  const opts = (name: BackendName) => ({
    name,
    deadlineMs: config.BACKEND_DEADLINE_MS,
    idempotent: ['getVersion'],
    maxMessageBytes: config.GRPC_MAX_MESSAGE_BYTES,
  });
  const readerKeeping = kept ? { reader: 'gateway', ttlMs: config.ORG_CACHE_TTL_MS } : undefined;
  const authz = authzClients(
    config.AUTHZ_GRPC_ADDR,
    opts('authz'),
    readerKeeping && {
      reader: readerKeeping.reader,
      decisions: { ttlMs: config.AUTHZ_DECISION_CACHE_TTL_MS, maxEntries: config.AUTHZ_DECISION_CACHE_SIZE },
      roles: { ttlMs: config.ORG_CACHE_TTL_MS },
    },
  );
  // Kept like the organizations the routes look up (ORG_CACHE_TTL_MS): the owners' notices keep them true.
  const clusters = clustersClients(config.CLUSTERS_GRPC_ADDR, opts('clusters'), readerKeeping);
  const orgsTeams = orgsTeamsClients(
    config.ORGS_TEAMS_GRPC_ADDR,
    opts('orgs-teams'),
    readerKeeping && { ...readerKeeping, tokenTtlMs: config.AUTH_CACHE_TTL_MS },
  );
  const contracts = contractsLicensingClients(config.CONTRACTS_LICENSING_GRPC_ADDR, opts('contracts-licensing'), readerKeeping);
  const metricsproxy = metricsproxyClients(config.METRICSPROXY_GRPC_ADDR, opts('metricsproxy'), readerKeeping);
  const billing = billingDashboardClients(config.BILLING_DASHBOARD_GRPC_ADDR, opts('billing-dashboard'), readerKeeping);
  const marketplace = marketplaceListenerClients(config.MARKETPLACE_LISTENER_GRPC_ADDR, opts('marketplace-listener'), readerKeeping);
  const backends: Backends = {
    authz: authz.clients,
    orgsTeams: orgsTeams.clients,
    contractsLicensing: contracts.clients,
    billingDashboard: billing.clients,
    metricsproxy: metricsproxy.clients,
    marketplaceListener: marketplace.clients,
    clusters: clusters.clients,
  };
  const readModel = allOf([
    authz.readModel,
    clusters.readModel,
    contracts.readModel,
    billing.readModel,
    metricsproxy.readModel,
    marketplace.readModel,
    orgsTeams.readModel,
  ]);
  return { backends, readModel: { ...readModel, forgetTokens: orgsTeams.readModel.forgetTokens } };
}

/** The GetVersion client of each backend app (every app's first service answers it), for status pages. */
export function versionClients(backends: Backends): [BackendName, { getVersion: PromiseClient<any>['getVersion'] }][] {
  return (Object.entries(BACKEND_APPS) as [BackendName, keyof Backends][]).map(([name, key]) => [
    name,
    Object.values(backends[key])[0] as { getVersion: PromiseClient<any>['getVersion'] },
  ]);
}

/**
 * The backends as one request sees them: every call carries the request's id and never outlives its
 * deadline, without each handler passing them. The clients are wrapped lazily, on first use.
 */
export function bindBackends(backends: Backends, requestId: string, deadline: number, arrivedAt?: number): Backends {
  const call = (): CallOptions => ({ requestId, deadlineMs: Math.max(1, deadline - Date.now()), arrivedAt });
  const bindClient = (client: object) =>
    new Proxy(client, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (typeof value !== 'function' || prop === 'close') return value;
        return (req: unknown, opts?: CallOptions) => value.call(target, req, { ...call(), ...opts });
      },
    });
  const groups = new Map<PropertyKey, object>();
  return new Proxy(backends, {
    get(target, app) {
      let group = groups.get(app);
      if (!group) {
        const clients = Reflect.get(target, app) as Record<string, object>;
        group = Object.fromEntries(Object.entries(clients).map(([k, c]) => [k, bindClient(c)]));
        groups.set(app, group);
      }
      return group;
    },
  });
}

/** Closes every channel. */
export function closeBackends(backends: Backends): void {
  for (const group of Object.values(backends))
    for (const client of Object.values(group as Record<string, { close(): void }>)) client.close();
}
