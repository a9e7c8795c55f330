import { z } from 'zod';
import type { marketplaceListenerV1 } from '@platform/proto';
import { sectionRoutes, type Route } from '../../route';

// Marketplace installers (docs/marketplaces.md), beyond the spec: a site admin prepares the installers a
// marketplace buyer's notification binds. Marketplace deployments only, like the webhook listener itself.

const route = sectionRoutes({ tag: 'Marketplaces', backend: 'marketplace-listener' });

const Marketplace = z.enum(['ProviderA', 'ProviderB', 'ProviderC']);

const InstallerRequest = z
  .object({
    marketplace: Marketplace,
    options: z.record(z.string(), z.unknown()).optional().meta({
      description: 'Free-form options the installer is prepared with; `product` (a catalog product) names the contract a binding makes',
    }),
  })
  .meta({ id: 'MarketplaceInstallerRequest' });

const InstallerJson = z
  .object({
    id: z.string().meta({ description: 'The installer ID a notification’s bindingInfo.installerId names' }),
    marketplace: Marketplace,
    options: z.record(z.string(), z.unknown()),
    createdBy: z.string(),
    createdAt: z.number().int().meta({ description: 'Unix seconds' }),
    boundSubscriptionId: z.string().meta({ description: 'The subscription it is bound to; empty while unbound' }),
    boundAt: z.number().int().meta({ description: 'Unix seconds; 0 while unbound' }),
  })
  .meta({ id: 'MarketplaceInstaller' });

const installerJson = (i: marketplaceListenerV1.Installer): z.input<typeof InstallerJson> => ({
  id: i.id,
  marketplace: i.marketplace as z.infer<typeof Marketplace>,
  options: JSON.parse(i.optionsJson) as Record<string, unknown>,
  createdBy: i.createdBy,
  createdAt: i.createdUnix,
  boundSubscriptionId: i.boundSubscriptionId,
  boundAt: i.boundUnix,
});

const ListQuery = z.object({
  marketplace: Marketplace.optional(),
  unbound: z.enum(['true', 'false']).optional().meta({ description: '`true`: installers not bound yet' }),
});

export const marketplaceInstallerRoutes: Route[] = [
  route({
    method: 'post',
    scope: 'write:organization',
    path: '/marketplaces/installers',
    summary: 'Prepare a marketplace installer (site admin)',
    auth: 'token',
    gate: 'marketplace',
    requires: [{ on: 'site', permission: 'admin:site' }],
    body: { schema: InstallerRequest, invalid: { status: 400, prefix: 'invalid installer' } },
    errors: [{ status: 400, description: 'for options over 16 KiB or a `product` the catalog does not have' }],
    response: { status: 201, schema: InstallerJson },
    async handle({ body }, { backends, caller }) {
      const created = await backends.marketplaceListener.listener.createInstaller({
        marketplace: body.marketplace,
        optionsJson: JSON.stringify(body.options ?? {}),
        actor: caller.login,
      });
      return { status: 201, body: installerJson(created) };
    },
  }),
  route({
    method: 'get',
    scope: 'read:organization',
    path: '/marketplaces/installers',
    summary: 'Marketplace installers, newest first (site admin)',
    auth: 'token',
    gate: 'marketplace',
    requires: [{ on: 'site', permission: 'admin:site' }],
    query: ListQuery,
    response: { status: 200, schema: z.array(InstallerJson) },
    async handle({ query }, { kept }) {
      const list = await kept.marketplaceListener.listener.listInstallers({
        marketplace: query.marketplace ?? '',
        unboundOnly: query.unbound === 'true',
        limit: 1000,
      });
      return { body: list.installers.map(installerJson) };
    },
  }),
];
