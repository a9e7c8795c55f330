import { defineApp, startService } from '@platform/service-kit';
import { migrations } from '../migrations';
import { assertOpenFgaSettings, authzEnv, type AuthzConfig } from './config';
import { authzService, chooseEngine } from './authz-service';

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
        return [authzService(engine, model)];
      },
    },
    config,
  );
}
