import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { assertOpenFgaSettings, authzEnv, type AuthzConfig } from './config';
import { authzService, chooseEngine } from './authz-service';
import { AllowedPermissions } from './roles/allowed-permissions';
import { Roles } from './roles/roles';
import { rolesService } from './roles/service';

/** The authz service: the OpenFGA model, checks, and the relationship tuples other services write. */
export const authzApp = defineApp({ name: 'authz', env: authzEnv, start: startAuthz });

function startAuthz(config: AuthzConfig) {
  assertOpenFgaSettings(config);
  return startService(
    {
      name: 'authz',
      protoPackage: 'authz',
      database: { schema: 'authz', migrations },
      async grpc({ db, log }) {
        const { engine, model } = await chooseEngine(config, db!, log);
        const roles = new Roles(db!, engine, { maxRolesPerTeam: config.MAX_ROLES_PER_TEAM, log });
        return [authzService(engine, model), rolesService(roles, new AllowedPermissions(engine, model))];
      },
    },
    config,
  );
}
