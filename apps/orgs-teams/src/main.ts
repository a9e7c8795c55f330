import { runMain } from '@platform/service-kit';
import { orgsTeamsApp } from './app';

runMain(orgsTeamsApp);
