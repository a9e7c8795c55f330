import { InputError } from '@platform/errors';
import { marketplaceListenerV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { InstallerRow } from './installers/installers-store';
import { marketplaceOf, type MeteringProxy } from './metering/metering';
import type { MarketplaceListener } from './subscriptions/listener';
import type { SubscriptionRow } from './subscriptions/subscriptions-store';

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

/** A subscription as the dashboard answers it; billing details only for one subscription. */
export function subscriptionOf(row: SubscriptionRow, withDetails: boolean): marketplaceListenerV1.Subscription {
  return {
    marketplace: row.marketplace,
    subscriptionId: row.subscription_id,
    subscriberId: Number(row.subscriber_id ?? 0),
    requesterId: Number(row.requester_id ?? 0),
    boundedInstallerId: row.bounded_installer_id ?? '',
    state: row.state,
    isRevocable: row.is_revocable,
    noOfBillingEventSent: Number(row.no_of_billing_event_sent),
    createdMs: row.created_at.getTime(),
    lastUpdatedMs: row.last_updated_at.getTime(),
    billingDetailsJson: withDetails ? JSON.stringify(row.billing_details) : '',
    claimId: row.claim_id ?? '',
  };
}

/**
 * The MarketplaceListenerService methods that change nothing; every other one is a write, announced
 * (marketplace-changed.ts). The readers keep some of them (MARKETPLACE_READS, @platform/marketplace-listener-client).
 */
export const MARKETPLACE_LISTENER_READS: readonly (keyof typeof marketplaceListenerV1.MarketplaceListenerServiceService)[] = [
  'getVersion',
  'listInstallers',
  'listSubscriptions',
  'getSubscription',
  'pingSubscription',
  'listAuditReports',
  'getSettingWarnings',
  'checkReadiness',
];

/** The MarketplaceListenerService binding: one line per RPC of proto/platformadmin/marketplacelistener/v1/, handing it to its feature. */
export function marketplaceListenerService(
  listener: MarketplaceListener,
  metering: MeteringProxy,
): ServiceBinding<typeof marketplaceListenerV1.MarketplaceListenerServiceService> {
  return bindService(marketplaceListenerV1.MarketplaceListenerServiceService, {
    getVersion: async () => versionOf('marketplace-listener'),
    createInstaller: async (req) => installerOf(await listener.createInstaller(req.marketplace, req.optionsJson, req.actor)),
    listInstallers: async (req) => {
      const rows = await listener.installers.list({
        marketplace: req.marketplace || undefined,
        unboundOnly: req.unboundOnly,
        limit: req.limit,
      });
      return { installers: rows.map(installerOf) };
    },
    listSubscriptions: async (req) => {
      const rows = await listener.subscriptions.list(req.marketplace ? marketplaceOf(req.marketplace) : undefined);
      return { subscriptions: rows.map((r) => subscriptionOf(r, false)) };
    },
    getSubscription: async (req) => subscriptionOf(await existing(req), true),
    revokeSubscription: async (req) =>
      subscriptionOf(await listener.revoke(marketplaceOf(req.marketplace), req.subscriptionId, req.actor || 'site admin'), true),
    pingSubscription: async (req) => {
      const sub = await existing(req);
      if (!metering.hasMetering(sub.marketplace)) throw new InputError(`${sub.marketplace} has no metering readiness to ping`);
      const readiness = await metering.readiness(sub.marketplace, sub);
      // The dashboard's metering ping: 200 when the metering-readiness endpoint answers, 400 otherwise.
      if (!readiness.ready) throw new InputError(`${sub.marketplace} metering is not ready: ${readiness.message}`);
      return { marketplace: sub.marketplace, ...readiness };
    },
    listAuditReports: async (req) => {
      const sub = await existing(req);
      const periods = await listener.subscriptions.auditReports(sub.marketplace, sub.subscription_id);
      return {
        periods: periods.map((p) => ({
          period: p.period,
          events: p.events.map((e) => ({
            marketplace: e.marketplace,
            subscriptionId: e.subscriptionId,
            status: e.status,
            operationType: e.operationType,
            description: e.description,
            dataJson: JSON.stringify(e.data ?? {}),
            timestampMs: Number(e.timestampMs),
          })),
        })),
      };
    },
    getSettingWarnings: async () => ({
      marketplaces: Object.entries(metering.warnings()).map(([marketplace, warnings]) => ({
        marketplace,
        warnings: warnings.map((w) => ({ level: w.Level, msg: w.Msg })),
      })),
    }),
    reportUsage: async (req) => {
      const marketplace = marketplaceOf(req.marketplace);
      const raw = req.records.map((r) => ({ dimension: r.dimension, quantity: Number(r.quantity), timestampMs: Number(r.timestampMs) }));
      const done = await metering.report(marketplace, req.subscriptionId, raw, req.consumerId);
      return {
        marketplace,
        subscriptionId: req.subscriptionId,
        results: done.outcomes.map((o) => ({
          dimension: o.dimension,
          quantity: o.quantity,
          timestampMs: o.timestamp.getTime(),
          status: o.status,
          recordId: o.recordId,
          message: o.message,
        })),
        sent: done.sent,
        noOfBillingEventSent: done.total,
      };
    },
    checkReadiness: async (req) => {
      const marketplace = marketplaceOf(req.marketplace);
      const sub = req.subscriptionId ? await existing({ marketplace, subscriptionId: req.subscriptionId }) : undefined;
      return { marketplace, ...(await metering.readiness(marketplace, sub)) };
    },
  });

  /** The subscription a dashboard row names; the spec answers 400 for an unknown one (and an invalid marketplace). */
  async function existing(ref: { marketplace: string; subscriptionId: string }): Promise<SubscriptionRow> {
    const row = await listener.subscriptions.get(marketplaceOf(ref.marketplace), ref.subscriptionId);
    if (!row) throw new InputError(`subscription ${ref.subscriptionId} of ${ref.marketplace} does not exist`);
    return row;
  }
}
