import { isMarketplaceDeployment, type PlatformConfig } from '@platform/service-kit';

/**
 * The spec's deployment gates. A route carrying a gate exists only where the gate holds;
 * elsewhere it is not registered and answers 404 like any unknown route.
 */
export type Gate =
  | 'hosted' // contracts, license proxy, claims
  | 'billing' // /dashboard/*, /dbaas/billing/*
  | 'marketplace' // the webhook listener
  | 'marketplace-or-dev' // GET /orgs/claim/
  | 'providera' // metered-billing proxy of the first provider
  | 'providerc'; // metered-billing proxy of the third provider

/** Whether a gate holds on this deployment; the one place gating is decided. */
export function gateOpen(gate: Gate | undefined, config: PlatformConfig): boolean {
  switch (gate) {
    case undefined:
      return true;
    case 'hosted':
      return config.DEPLOYMENT_TYPE === 'Hosted';
    case 'billing':
      return config.BILLING_ENABLED;
    case 'marketplace':
      return isMarketplaceDeployment(config.DEPLOYMENT_TYPE);
    case 'marketplace-or-dev':
      return isMarketplaceDeployment(config.DEPLOYMENT_TYPE) || config.RUN_MODE === 'dev';
    case 'providera':
      return config.DEPLOYMENT_TYPE === 'ProviderAMarketplace';
    case 'providerc':
      return config.DEPLOYMENT_TYPE === 'ProviderCMarketplace';
  }
}

/**
 * Deployment types whose clusters may register themselves (`POST /register`, docs/licensing.md): not the
 * marketplace ones, whose licenses come with the subscription. Elsewhere the route exists and answers 403.
 */
export const SELF_REGISTRATION: readonly string[] = ['Hosted', 'SelfHostedProduction'];
