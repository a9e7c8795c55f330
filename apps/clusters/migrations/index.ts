import { outboxMigration, type Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { inventory } from './20261122010000_inventory';
import { agentIngestion } from './20261122030000_agent_ingestion';
import { clusterSets } from './20261123000000_cluster_sets';
import { featureSets } from './20261123010000_feature_sets';
import { clientOrgs } from './20261123020000_client_orgs';
import { connectedUsers } from './20261123030000_connected_users';
import { clientOrgProvisions } from './20261124100000_client_org_provisions';
import { hubEnrolments } from './20261124110000_hub_enrolments';

/** Every migration of the clusters schema, oldest first. */
export const migrations: Migration[] = [
  init,
  inventory,
  outboxMigration('20261122020000_outbox'),
  agentIngestion,
  clusterSets,
  featureSets,
  clientOrgs,
  connectedUsers,
  clientOrgProvisions,
  hubEnrolments,
];
