import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { agentReports } from './20261122010000_agent_reports';

/** Every migration of the billing schema, oldest first. */
export const migrations: Migration[] = [init, agentReports];
