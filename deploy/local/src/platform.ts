import { startAuthz } from '@platform/app-authz';
import { startOrgsTeams } from '@platform/app-orgs-teams';
import { startContractsLicensing } from '@platform/app-contracts-licensing';
import { startBillingDashboard } from '@platform/app-billing-dashboard';
import { startMetricsproxy } from '@platform/app-metricsproxy';
import { startClusters } from '@platform/app-clusters';
import { startMarketplaceListener } from '@platform/app-marketplace-listener';
import { listenerEnv } from '@platform/app-marketplace-listener';
import { startGateway } from '@platform/app-gateway';
import { gatewayEnv } from '@platform/app-gateway';
import { loadConfig, serviceEnv, type RunningService } from '@platform/service-kit';

/** The backend apps in start order; the gateway starts last, once it knows their addresses. */
const BACKENDS = {
  authz: { start: startAuthz, addrVar: 'AUTHZ_GRPC_ADDR' },
  'orgs-teams': { start: startOrgsTeams, addrVar: 'ORGS_TEAMS_GRPC_ADDR' },
  'contracts-licensing': { start: startContractsLicensing, addrVar: 'CONTRACTS_LICENSING_GRPC_ADDR' },
  'billing-dashboard': { start: startBillingDashboard, addrVar: 'BILLING_DASHBOARD_GRPC_ADDR' },
  metricsproxy: { start: startMetricsproxy, addrVar: 'METRICSPROXY_GRPC_ADDR' },
  clusters: { start: startClusters, addrVar: 'CLUSTERS_GRPC_ADDR' },
  'marketplace-listener': { start: startMarketplaceListener, addrVar: 'MARKETPLACE_LISTENER_GRPC_ADDR' },
} as const;
export type AppName = keyof typeof BACKENDS | 'gateway';

/** The whole platform in one process. */
export interface LocalPlatform {
  /** Entry URL, e.g. http://localhost:8080/ */
  url: string;
  apps: Map<AppName, RunningService>;
  /** Stops one app (its port stays reserved in the gateway's config). */
  stopApp(name: AppName): Promise<void>;
  /** Starts a stopped app again on the port it had. */
  startApp(name: AppName): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Boots every app in this process with the embedded defaults (PGlite under DATA_DIR unless
 * DATABASE_URL, in-process bus unless NATS_URL). Backends listen on free loopback ports that only
 * the gateway needs to know; the gateway serves HTTP_PORT.
 */
export async function startPlatform(env: NodeJS.ProcessEnv = process.env, onProgress: (msg: string) => void = () => {}): Promise<LocalPlatform> {
  const base = loadConfig(serviceEnv, { ...env, GRPC_PORT: env.GRPC_PORT ?? '0' });
  const apps = new Map<AppName, RunningService>();
  const ports = new Map<AppName, number>();
  const listener = loadConfig(listenerEnv, { ...env, GRPC_PORT: '0', MARKETPLACE_HTTP_PORT: env.MARKETPLACE_HTTP_PORT ?? '0' });

  const startOne = async (name: AppName): Promise<void> => {
    const grpcPort = ports.get(name) ?? 0;
    let running: RunningService;
    if (name === 'gateway') {
      running = await startGateway(gatewayConfig());
    } else if (name === 'marketplace-listener') {
      const port = apps.get(name)?.httpPort ?? listenerHttpPort ?? listener.MARKETPLACE_HTTP_PORT;
      running = await startMarketplaceListener({ ...listener, GRPC_PORT: grpcPort, MARKETPLACE_HTTP_PORT: port });
      listenerHttpPort = running.httpPort;
    } else {
      running = await BACKENDS[name].start({ ...base, GRPC_PORT: grpcPort });
    }
    ports.set(name, running.grpcPort);
    apps.set(name, running);
  };
  let listenerHttpPort: number | undefined;

  const gatewayConfig = () => {
    const addrs: Record<string, string> = {};
    for (const [name, { addrVar }] of Object.entries(BACKENDS)) addrs[addrVar] = `127.0.0.1:${ports.get(name as AppName)}`;
    return loadConfig(gatewayEnv, {
      ...env,
      ...addrs,
      GRPC_PORT: String(ports.get('gateway') ?? 0),
      MARKETPLACE_LISTENER_HTTP_URL: `http://127.0.0.1:${listenerHttpPort}`,
    });
  };

  const stopApp = async (name: AppName) => {
    const app = apps.get(name);
    apps.delete(name);
    await app?.stop();
  };
  const stop = async () => {
    // Gateway first, so no new work reaches the backends while they drain.
    for (const name of ['gateway', ...Object.keys(BACKENDS).reverse()] as AppName[]) await stopApp(name);
  };

  try {
    const names = Object.keys(BACKENDS) as AppName[];
    for (const [i, name] of names.entries()) {
      onProgress(`starting ${name} (${i + 1}/${names.length + 1})`);
      await startOne(name);
    }
    onProgress(`starting gateway (${names.length + 1}/${names.length + 1})`);
    await startOne('gateway');
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `http://localhost:${apps.get('gateway')!.httpPort}/`,
    apps,
    stopApp,
    startApp: startOne,
    stop,
  };
}
