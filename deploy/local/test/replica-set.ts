import { authzApp } from '@platform/app-authz';
import { gatewayApp } from '@platform/app-gateway';
import { orgsTeamsApp } from '@platform/app-orgs-teams';
import { startApp, type RunningService } from '@platform/service-kit';
import type { LocalPlatform } from '../src/platform';

/** A second replica set beside a platform: its own authz, orgs-teams and gateway, as a second pod of each would be. */
export interface ReplicaSet {
  /** Its gateway's base URL. */
  url: string;
  gateway: RunningService;
  /** authz, orgs-teams and the gateway, in the order they started. */
  replicas: RunningService[];
  stop(): Promise<void>;
}

/**
 * Starts authz, orgs-teams and a gateway on `env` (the platform's settings, with the NATS server this set connects to
 * first); the apps it has no replica of are the platform's own, reached over their gRPC ports.
 */
export async function startReplicaSet(platform: LocalPlatform, env: Record<string, string>): Promise<ReplicaSet> {
  const grpc = (name: string) => `127.0.0.1:${platform.apps.get(name)!.grpcPort}`;
  const base = {
    ...env,
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    CLUSTERS_GRPC_ADDR: grpc('clusters'),
    BILLING_DASHBOARD_GRPC_ADDR: grpc('billing-dashboard'),
    CONTRACTS_LICENSING_GRPC_ADDR: grpc('contracts-licensing'),
    METRICSPROXY_GRPC_ADDR: grpc('metricsproxy'),
    MARKETPLACE_LISTENER_GRPC_ADDR: grpc('marketplace-listener'),
  };
  const replicas: RunningService[] = [];
  const stop = async () => {
    for (const r of [...replicas].reverse()) await r.stop().catch(() => {});
  };
  try {
    const authz = await startApp(authzApp, base);
    replicas.push(authz);
    const orgsTeams = await startApp(orgsTeamsApp, { ...base, AUTHZ_GRPC_ADDR: `127.0.0.1:${authz.grpcPort}` });
    replicas.push(orgsTeams);
    const gateway = await startApp(gatewayApp, {
      ...base,
      HTTP_PORT: '0',
      AUTHZ_GRPC_ADDR: `127.0.0.1:${authz.grpcPort}`,
      ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${orgsTeams.grpcPort}`,
    });
    replicas.push(gateway);
    return { url: `http://localhost:${gateway.httpPort}/`, gateway, replicas, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
