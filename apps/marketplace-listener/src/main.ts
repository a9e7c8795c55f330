import { runMain } from '@platform/service-kit';
import { marketplaceListenerApp } from './app';

runMain(marketplaceListenerApp);
