export {
  MARKETPLACE_LISTENER_KEPT,
  keptMarketplaceListener,
  marketplaceListenerClients,
  MARKETPLACE_READS,
  type MarketplaceListenerClients,
  type MarketplaceListenerKeeping,
} from './clients';
