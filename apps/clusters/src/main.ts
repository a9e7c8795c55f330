import { runMain } from '@platform/service-kit';
import { clustersApp } from './app';

runMain(clustersApp);
