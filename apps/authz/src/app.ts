import * as fs from 'node:fs';
import type { Database } from '@platform/db';
import { defineApp, startService, type Logger } from '@platform/service-kit';
import { migrations } from '../migrations';
import { Authorization } from './authorization';
import { assertOpenFgaSettings, authzEnv, type AuthzConfig } from './config';
import { EmbeddedEngine, PLATFORM_MODEL_FILE, TypeSystem, type AuthzEngine } from './engine';
import { OpenFgaEngine } from './openfga/openfga-engine';
import { AllowedPermissions } from './roles/allowed-permissions';
import { Roles } from './roles/roles';
import { rolesService } from './roles/service';
import { authzService } from './service';

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
        return [authzService(new Authorization(engine, model)), rolesService(roles, new AllowedPermissions(engine, model))];
      },
    },
    config,
  );
}

/** The engine the configuration asks for: OpenFGA when OPENFGA_API_URL is set, else the embedded one (also the admin CLI's). */
export async function chooseEngine(config: AuthzConfig, db: Database, log: Logger): Promise<{ engine: AuthzEngine; model: TypeSystem }> {
  const dsl = fs.readFileSync(PLATFORM_MODEL_FILE, 'utf8');
  const model = TypeSystem.fromDsl(dsl);
  if (config.OPENFGA_API_URL) {
    const engine = await OpenFgaEngine.connect({
      apiUrl: config.OPENFGA_API_URL,
      storeId: config.OPENFGA_STORE_ID!,
      apiToken: config.OPENFGA_API_TOKEN,
      modelDsl: dsl,
      log,
    });
    log.info({ apiUrl: config.OPENFGA_API_URL, storeId: config.OPENFGA_STORE_ID }, 'authorization engine: OpenFGA');
    return { engine, model };
  }
  log.info('authorization engine: embedded');
  return { engine: new EmbeddedEngine(db, model), model };
}
