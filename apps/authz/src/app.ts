import * as fs from 'node:fs';
import type { Database } from '@platform/db';
import { AUTHZ_SCHEMA } from '@platform/authz-client';
import { announcingWrites, defineApp, startService, type Logger } from '@platform/service-kit';
import { migrations } from '../migrations';
import { Authorization } from './authorization';
import { assertOpenFgaSettings, authzEnv, type AuthzConfig } from './config';
import { EmbeddedEngine, modelOfFile, PLATFORM_MODEL_FILE, TypeSystem, type AuthzEngine } from './engine';
import { OpenFgaEngine } from './openfga/openfga-engine';
import { AllowedPermissions } from './roles/allowed-permissions';
import { Roles } from './roles/roles';
import { ROLES_READS, rolesService } from './roles/service';
import { AUTHZ_READS, authzService } from './service';
import { describeStore } from './store-description';
import { recordingTupleWrites, tuplesChangedNotice } from './tuples-changed';

/** Its schema and the migrations that make it. */
const DATABASE = { schema: AUTHZ_SCHEMA, migrations };

/** The authz service: the OpenFGA model, checks, and the relationship tuples other services write. */
export const authzApp = defineApp({ name: 'authz', env: authzEnv, database: DATABASE, start: startAuthz });

function startAuthz(config: AuthzConfig) {
  assertOpenFgaSettings(config);
  let engine: AuthzEngine | undefined;
  return startService(
    {
      name: 'authz',
      protoPackage: 'authz',
      database: DATABASE,
      // Only to send its tuple notices; a write is not held up while it is disconnected, so readiness does not follow it.
      bus: 'notices',
      async grpc({ db, log, bus }) {
        const { engine: chosen, model } = await chooseEngine(config, db!, log);
        engine = chosen;
        if (chosen instanceof EmbeddedEngine) loadTuples(chosen, log);
        // Checks are answered by the engine, tuples in memory; what a reader keeps of them is authz's read model
        // (@platform/authz-client), kept under what each answer was read from and dropped by the notice of every
        // method not listed as a read, which names what it wrote.
        const tuplesChanged = tuplesChangedNotice(bus, log, chosen);
        const roles = new Roles(db!, chosen, { maxRolesPerTeam: config.MAX_ROLES_PER_TEAM, log });
        const store = await describeStore(db!, model.model);
        return [
          recordingTupleWrites(announcingWrites(authzService(new Authorization(chosen, model), store), AUTHZ_READS, tuplesChanged)),
          recordingTupleWrites(announcingWrites(rolesService(roles, new AllowedPermissions(chosen, model)), ROLES_READS, tuplesChanged)),
        ];
      },
      // A service account's questions are answered by this app's own engine, not by a call to itself.
      holdsEach: () => async (account, questions) =>
        engine!.batchCheck(questions.map((q) => ({ user: `user:${account.id}`, relation: q.relation, object: q.object }))),
    },
    config,
  );
}

/** Loads the tuples into memory now rather than at the first check; until then checks read the table. */
function loadTuples(engine: EmbeddedEngine, log: Logger): void {
  const started = Date.now();
  engine.load().then(
    () =>
      engine.inMemory?.mode === 'table'
        ? log.info(
            { maxTuples: engine.inMemory.maxTuples, ms: Date.now() - started },
            'authorization tuples: more than AUTHZ_MEMORY_TUPLES_MAX, checks read the table through a bounded cache',
          )
        : log.info({ tuples: engine.inMemory?.size, ms: Date.now() - started }, 'authorization tuples loaded into memory'),
    (err: unknown) => log.warn({ err }, 'authorization tuples not loaded into memory; checks read the table'),
  );
}

/** The engine the configuration asks for: OpenFGA when OPENFGA_API_URL is set, else the embedded one (also the admin CLI's). */
export async function chooseEngine(config: AuthzConfig, db: Database, log: Logger): Promise<{ engine: AuthzEngine; model: TypeSystem }> {
  const dsl = fs.readFileSync(PLATFORM_MODEL_FILE, 'utf8');
  const model = new TypeSystem(modelOfFile(PLATFORM_MODEL_FILE, dsl));
  // Time-bound grants (a team's custom role until a date, the model's `not_after`) end at authz's clock, never the caller's.
  const context = () => ({ current_time: new Date().toISOString() });
  if (config.OPENFGA_API_URL) {
    const engine = await OpenFgaEngine.connect({
      apiUrl: config.OPENFGA_API_URL,
      storeId: config.OPENFGA_STORE_ID!,
      apiToken: config.OPENFGA_API_TOKEN,
      modelDsl: dsl,
      log,
      context,
    });
    log.info({ apiUrl: config.OPENFGA_API_URL, storeId: config.OPENFGA_STORE_ID }, 'authorization engine: OpenFGA');
    return { engine, model };
  }
  log.info('authorization engine: embedded');
  const memory = { maxTuples: config.AUTHZ_MEMORY_TUPLES_MAX, cacheTuples: config.AUTHZ_TUPLE_CACHE_MAX };
  return { engine: new EmbeddedEngine(db, model, { context, memory }), model };
}
