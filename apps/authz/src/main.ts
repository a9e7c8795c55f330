import { runMain } from '@platform/service-kit';
import { authzApp } from './app';

runMain(authzApp);
