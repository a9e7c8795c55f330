import type { Migration } from '@platform/db';
import { init } from './20261122000000_init';
import { tuples } from './20261122010000_tuples';
import { roles } from './20261122020000_roles';
import { tupleChanges } from './20261124080000_tuple_changes';
import { tupleConditions } from './20261125000000_tuple_conditions';
import { roleTeamUntil } from './20261125010000_role_team_until';

/** Every migration of the authz schema, oldest first. */
export const migrations: Migration[] = [init, tuples, roles, tupleChanges, tupleConditions, roleTeamUntil];
