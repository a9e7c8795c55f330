import { defineApp, ownDependencyChecks, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { listenerEnv, type ListenerConfig } from './config';
import { createListenerHttp } from './http';
import { marketplaceListenerService } from './service';

/** The marketplace webhook listener: its own HTTP root plus a gRPC API for the dashboard. */
export const marketplaceListenerApp = defineApp({ name: 'marketplace-listener', env: listenerEnv, start: startMarketplaceListener });

function startMarketplaceListener(config: ListenerConfig) {
  return startService(
    {
      name: 'marketplace-listener',
      protoPackage: 'marketplacelistener',
      database: { schema: 'marketplace', migrations },
      grpc: () => [marketplaceListenerService()],
      http: {
        port: config.MARKETPLACE_HTTP_PORT,
        portSetting: 'MARKETPLACE_HTTP_PORT',
        handler: (ctx) => createListenerHttp(ctx.log, ownDependencyChecks(ctx)),
      },
    },
    config,
  );
}
