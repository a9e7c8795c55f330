import { authzV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { Authorization } from './authorization';
import { measureCheck } from './check-metrics';
import type { CheckRequest } from './engine';

const toCheck = (c: authzV1.CheckRequest): CheckRequest => {
  const t = c.tuple ?? { user: '', relation: '', object: '' };
  return { user: t.user, relation: t.relation, object: t.object, contextualTuples: c.contextualTuples };
};

/** The AuthzService RPCs (proto/platformadmin/authz/v1/authz.proto). */
export function authzService(authorization: Authorization): ServiceBinding<typeof authzV1.AuthzServiceService> {
  return bindService(authzV1.AuthzServiceService, {
    getVersion: async () => versionOf('authz'),
    check: async (req) => ({ allowed: await measureCheck('check', () => authorization.check(toCheck(req))) }),
    batchCheck: async (req) => ({ allowed: await measureCheck('batch_check', () => authorization.batchCheck(req.checks.map(toCheck))) }),
    checkPermission: async (req) => ({
      allowed: await measureCheck('check_permission', () => authorization.checkPermission(req.userId, req.permission, req.objectId)),
    }),
    listRelations: async (req) => ({ relations: await authorization.listRelations(req.user, req.object, req.relations) }),
    writeTuples: async (req) => (await authorization.write(req.writes, req.deletes, { idempotent: req.idempotent }), {}),
    readTuples: async (req) => ({
      tuples: await authorization.readTuples({
        object: req.object || undefined,
        relation: req.relation || undefined,
        user: req.user || undefined,
      }),
    }),
    permissionCatalog: async () => ({
      permissions: authorization.catalog().map((p) => ({
        namespace: p.namespace,
        action: p.action,
        description: p.description,
        associated: p.associated ?? [],
      })),
    }),
  });
}
