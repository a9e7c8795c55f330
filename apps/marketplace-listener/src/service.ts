import { marketplaceListenerV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';

/** The MarketplaceListenerService binding: one line per RPC of proto/platform/marketplacelistener/v1/, handing it to its feature. */
export function marketplaceListenerService(): ServiceBinding<typeof marketplaceListenerV1.MarketplaceListenerServiceService> {
  return bindService(marketplaceListenerV1.MarketplaceListenerServiceService, {
    getVersion: async () => versionOf('marketplace-listener'),
  });
}
