import { marketplaceListenerV1 } from '@platform/proto';
import { bindService, startService, versionOf, type RunningService } from '@platform/service-kit';
import { migrations } from '../migrations';
import type { ListenerConfig } from './config';
import { createListenerHttp } from './http';

/** Starts the marketplace webhook listener: its own HTTP root plus a gRPC API for the dashboard. */
export function startMarketplaceListener(config: ListenerConfig): Promise<RunningService> {
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
