export {
  keptMarketplaceListener,
  marketplaceListenerClients,
  MARKETPLACE_READS,
  type MarketplaceListenerClients,
  type MarketplaceListenerKeeping,
} from './clients';
