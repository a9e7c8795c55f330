import { InputError } from '@platform/errors';
import { marketplaceListenerV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { InstallerRow } from './installers/installers-store';
import type { MarketplaceListener } from './subscriptions/listener';

const unix = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : 0);

/** An installer row as the API answers it. */
export function installerOf(row: InstallerRow): marketplaceListenerV1.Installer {
  return {
    id: row.id,
    marketplace: row.marketplace,
    optionsJson: JSON.stringify(row.options),
    createdUnix: unix(row.created_at),
    createdBy: row.created_by,
    boundSubscriptionId: row.subscription_id ?? '',
    boundUnix: unix(row.bound_at),
  };
}

/** The MarketplaceListenerService binding: one line per RPC of proto/platform/marketplacelistener/v1/, handing it to its feature. */
export function marketplaceListenerService(
  listener: MarketplaceListener,
): ServiceBinding<typeof marketplaceListenerV1.MarketplaceListenerServiceService> {
  return bindService(marketplaceListenerV1.MarketplaceListenerServiceService, {
    getVersion: async () => versionOf('marketplace-listener'),
    createInstaller: async (req) => installerOf(await listener.createInstaller(req.marketplace, req.optionsJson, req.actor)),
    listInstallers: async (req) => {
      if (req.limit < 0 || req.limit > 1000) throw new InputError('limit must be between 1 and 1000');
      const rows = await listener.installers.list({
        marketplace: req.marketplace || undefined,
        unboundOnly: req.unboundOnly,
        limit: req.limit || 100,
      });
      return { installers: rows.map(installerOf) };
    },
  });
}
