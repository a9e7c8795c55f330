export {
  MARKETPLACE_LISTENER_KEPT,
  keptMarketplaceListener,
  marketplaceListenerClients,
  MARKETPLACE_READS,
  type MarketplaceListenerClients,
  type MarketplaceListenerKeeping,
  MARKETPLACE_LISTENER_SERVICES,
} from './clients';
