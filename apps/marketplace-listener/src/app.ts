import { loadSigningKey, UrlSigner } from '@platform/object-storage';
import { defineApp, ownDependencyChecks, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { listenerEnv, type ListenerConfig } from './config';
import { createListenerHttp } from './http';
import { addressMatcher, providerARanges } from './notifications/source-address';
import { marketplaceListenerService } from './service';
import { claimableCheck } from './subscriptions/claimable';
import { MarketplaceListener } from './subscriptions/listener';
import { grpcSubscriberDirectory, type SubscriberDirectory } from './subscriptions/subscribers';

export interface MarketplaceListenerDeps {
  /** Where subscribers are provisioned; by default orgs-teams and contracts-licensing over gRPC. Tests give their own. */
  directory?: (config: ListenerConfig) => SubscriberDirectory;
}

/** The marketplace webhook listener: its own HTTP root plus a gRPC API for the gateway's installer route. */
export function createMarketplaceListenerApp(deps: MarketplaceListenerDeps = {}) {
  return defineApp({ name: 'marketplace-listener', env: listenerEnv, start: (config: ListenerConfig) => start(config, deps) });
}

function start(config: ListenerConfig, deps: MarketplaceListenerDeps) {
  const directory = (deps.directory ?? defaultDirectory)(config);
  let listener: MarketplaceListener | undefined;
  return startService(
    {
      name: 'marketplace-listener',
      protoPackage: 'marketplacelistener',
      database: { schema: 'marketplace', migrations },
      grpc: (svc) => {
        listener = new MarketplaceListener(svc.db!, directory, svc.log, { claimBackoffSeconds: config.MARKETPLACE_CLAIM_BACKOFF_SECONDS });
        listener.useOutbox(svc.outbox(listener.effects()));
        return [marketplaceListenerService(listener)];
      },
      http: {
        port: config.MARKETPLACE_HTTP_PORT,
        portSetting: 'MARKETPLACE_HTTP_PORT',
        handler: async (ctx) => {
          const signer = new UrlSigner(await loadSigningKey(config));
          const fromProviderA = addressMatcher(providerARanges(config.PROVIDERA_ALLOWED_CIDRS));
          return createListenerHttp({
            log: ctx.log,
            checks: ownDependencyChecks(ctx),
            trustedProxies: config.MARKETPLACE_TRUSTED_PROXIES,
            notifications: {
              listener: listener!,
              signer,
              apiSecret: config.MARKETPLACE_API_SECRET,
              // Dev run mode takes the first provider's notifications from anywhere (spec 5.6).
              providerASource: config.RUN_MODE === 'dev' ? undefined : fromProviderA,
              providerCTestInstaller: config.PROVIDERC_TEST_INSTALLER_ID,
              linkTtlSeconds: config.MARKETPLACE_LINK_TTL_SECONDS,
              claimable: claimableCheck(directory, config.MARKETPLACE_CENTRAL_URL),
            },
          });
        },
      },
      onStop: async () => directory.close(),
    },
    config,
  );
}

const defaultDirectory = (config: ListenerConfig) =>
  grpcSubscriberDirectory({
    orgsTeams: config.ORGS_TEAMS_GRPC_ADDR,
    contracts: config.CONTRACTS_LICENSING_GRPC_ADDR,
    adminLogin: config.PLATFORM_ADMIN_USERNAME,
    contractDays: config.MARKETPLACE_CONTRACT_DAYS,
  });

/** The listener over orgs-teams and contracts-licensing. */
export const marketplaceListenerApp = createMarketplaceListenerApp();
