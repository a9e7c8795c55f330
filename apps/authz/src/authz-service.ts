import * as fs from 'node:fs';
import { authzV1 } from '@platform/proto';
import { bindService, versionOf, type Logger, type ServiceBinding } from '@platform/service-kit';
import type { Database } from '@platform/db';
import { EmbeddedEngine, PLATFORM_MODEL_FILE, TypeSystem, type AuthzEngine, type CheckRequest } from './engine';
import { OpenFgaEngine } from './openfga/openfga-engine';
import { permissionCatalog, resolvePermission, SITE_OBJECT } from './permissions';
import type { AuthzConfig } from './config';

/** The engine the configuration asks for: OpenFGA when OPENFGA_API_URL is set, else the embedded one. */
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

const toCheck = (c: authzV1.CheckRequest): CheckRequest => {
  const t = c.tuple ?? { user: '', relation: '', object: '' };
  return { user: t.user, relation: t.relation, object: t.object, contextualTuples: c.contextualTuples };
};

/** The AuthzService RPCs over an engine. */
export function authzService(engine: AuthzEngine, model: TypeSystem): ServiceBinding<typeof authzV1.AuthzServiceService> {
  return bindService(authzV1.AuthzServiceService, {
    getVersion: async () => versionOf('authz'),
    check: async (req) => ({ allowed: await engine.check(toCheck(req)) }),
    batchCheck: async (req) => ({ allowed: await engine.batchCheck(req.checks.map(toCheck)) }),
    async checkPermission(req) {
      const target = resolvePermission(req.permission);
      const object = target.objectType === 'site' ? SITE_OBJECT : `${target.objectType}:${req.objectId}`;
      return { allowed: await engine.check({ user: `user:${req.userId}`, relation: target.relation, object }) };
    },
    async listRelations(req) {
      const relations = req.relations.length ? req.relations : model.relationsOf(req.object.split(':')[0]);
      return { relations: await engine.listRelations(req.user, req.object, relations) };
    },
    writeTuples: async (req) => (await engine.write(req.writes, req.deletes, { idempotent: req.idempotent }), {}),
    readTuples: async (req) => ({
      tuples: await engine.readTuples({
        object: req.object || undefined,
        relation: req.relation || undefined,
        user: req.user || undefined,
      }),
    }),
    permissionCatalog: async () => ({
      permissions: permissionCatalog().map((p) => ({
        namespace: p.namespace,
        action: p.action,
        description: p.description,
        associated: p.associated ?? [],
      })),
    }),
  });
}
