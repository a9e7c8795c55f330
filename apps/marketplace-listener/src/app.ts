import { marketplaceListenerV1 } from '@platform/proto';
import { bindService, defineApp, startService, versionOf } from '@platform/service-kit';
import { migrations } from '../migrations';
import { listenerEnv, type ListenerConfig } from './config';
import { createListenerHttp } from './http';

/** The marketplace webhook listener: its own HTTP root plus a gRPC API for the dashboard. */
export const marketplaceListenerApp = defineApp({ name: 'marketplace-listener', env: listenerEnv, start: startMarketplaceListener });

function startMarketplaceListener(config: ListenerConfig) {
  return startService(
    {
      name: 'marketplace-listener',
      protoPackage: 'marketplacelistener',
      database: { schema: 'marketplace', migrations },
      grpc: () => [
        bindService(marketplaceListenerV1.MarketplaceListenerServiceService, {
          getVersion: async () => versionOf('marketplace-listener'),
        }),
      ],
      http: { port: config.MARKETPLACE_HTTP_PORT, handler: ({ log }) => createListenerHttp(log) },
    },
    config,
  );
}
