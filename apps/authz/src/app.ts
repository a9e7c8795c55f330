import * as fs from 'node:fs';
import type { Database } from '@platform/db';
import { defineApp, startService, type Logger } from '@platform/service-kit';
import { migrations } from '../migrations';
import { Authorization, type KeptAccess } from './authorization';
import { assertOpenFgaSettings, authzEnv, type AuthzConfig } from './config';
import { CachedEngine } from './decisions/cached-engine';
import { DecisionCache } from '@platform/bus';
import { announceTupleChanges } from './decisions/tuples-changed';
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
  let stopFollowing: (() => Promise<void>) | undefined;
  let decisions: CachedEngine | undefined;
  return startService(
    {
      name: 'authz',
      protoPackage: 'authz',
      database: { schema: 'authz', migrations },
      // Only for the decision caches' eviction notices; while it is disconnected they keep nothing, so readiness does not follow it.
      bus: 'notices',
      async grpc({ db, log, bus }) {
        const { engine, model } = await chooseEngine(config, db!, log);
        if (engine instanceof EmbeddedEngine) loadTuples(engine, log);
        const cache = new DecisionCache({ ttlMs: config.AUTHZ_DECISION_CACHE_TTL_MS, maxEntries: config.AUTHZ_DECISION_CACHE_SIZE });
        // Who-has-access answers: large, few (one per object an owner looks at), so a small share of the same bound.
        const accessKept = new DecisionCache<KeptAccess>({
          name: 'authz.who-has-access',
          ttlMs: config.AUTHZ_DECISION_CACHE_TTL_MS,
          maxEntries: Math.ceil(config.AUTHZ_DECISION_CACHE_SIZE / 100),
        });
        const stops = [await cache.followTuples(bus!), await accessKept.followTuples(bus!)];
        stopFollowing = async () => {
          await Promise.all(stops.map((stop) => stop()));
        };
        const tuplesChanged = announceTupleChanges([cache, accessKept], bus, log);
        decisions = new CachedEngine(engine, cache, tuplesChanged);
        // Roles gets the engine itself: its unit of work writes rows and tuples in one transaction of the embedded engine.
        const roles = new Roles(db!, engine, { maxRolesPerTeam: config.MAX_ROLES_PER_TEAM, log, tuplesChanged });
        return [
          authzService(new Authorization(decisions, model, accessKept)),
          rolesService(roles, new AllowedPermissions(decisions, model)),
        ];
      },
      // A service account's questions are answered by this app's own engine, not by a call to itself.
      holds: () => async (account, questions) => {
        const answers = await decisions!.batchCheck(
          questions.map((q) => ({ user: `user:${account.id}`, relation: q.relation, object: q.object })),
        );
        return answers.every(Boolean);
      },
      onStop: async () => {
        await stopFollowing?.();
      },
    },
    config,
  );
}

/** Loads the tuples into memory now rather than at the first check; until then checks read the table. */
function loadTuples(engine: EmbeddedEngine, log: Logger): void {
  const started = Date.now();
  engine.load().then(
    () => log.info({ tuples: engine.inMemory?.size, ms: Date.now() - started }, 'authorization tuples loaded into memory'),
    (err: unknown) => log.warn({ err }, 'authorization tuples not loaded into memory; checks read the table'),
  );
}

/** The engine the configuration asks for: OpenFGA when OPENFGA_API_URL is set, else the embedded one (also the admin CLI's). */
export async function chooseEngine(config: AuthzConfig, db: Database, log: Logger): Promise<{ engine: AuthzEngine; model: TypeSystem }> {
  const dsl = fs.readFileSync(PLATFORM_MODEL_FILE, 'utf8');
  const model = TypeSystem.fromDsl(dsl);
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
  return { engine: new EmbeddedEngine(db, model, { context }), model };
}
