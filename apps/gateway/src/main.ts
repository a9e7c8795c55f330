import { runMain } from '@platform/service-kit';
import { gatewayApp } from './app';

runMain(gatewayApp);
