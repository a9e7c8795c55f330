import { loadConfig, runMain, serviceEnv } from '@platform/service-kit';
import { startOrgsTeams } from './app';

runMain('orgs-teams', () => loadConfig(serviceEnv), startOrgsTeams);
