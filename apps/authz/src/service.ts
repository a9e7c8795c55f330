import { InputError } from '@platform/errors';
import { authzV1 } from '@platform/proto';
import { bindService, versionOf, type ServiceBinding } from '@platform/service-kit';
import type { Authorization } from './authorization';
import { measureCheck } from './check-metrics';
import type { CheckRequest, RequestContext, Tuple } from './engine';
import { withDependsOn } from './engine/recorded';

/** A JSON object carried as text (a context, a condition's parameters); empty means none. */
function parseJsonObject(text: string, what: string): Record<string, unknown> | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(`${what} is not valid JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * The most objects a ListObjects, or users a ListUsers, answers: OpenFGA's default maximum for both
 * (OPENFGA_LIST_OBJECTS_MAX_RESULTS, OPENFGA_LIST_USERS_MAX_RESULTS), so one call cannot make authz check every object
 * of a type, nor answer a list of any size. A list that reaches it may leave some out (docs/grpc.md).
 */
export const LIST_MAX_RESULTS = 1000;

const toTuple = (k: authzV1.TupleKey): Tuple => {
  const t: Tuple = { user: k.user, relation: k.relation, object: k.object };
  if (k.condition?.name)
    t.condition = { name: k.condition.name, context: parseJsonObject(k.condition.contextJson, 'condition context') ?? {} };
  return t;
};

const fromTuple = (t: Tuple): authzV1.TupleKey => ({
  user: t.user,
  relation: t.relation,
  object: t.object,
  ...(t.condition && { condition: { name: t.condition.name, contextJson: JSON.stringify(t.condition.context ?? {}) } }),
});

const toContext = (text: string): RequestContext | undefined => parseJsonObject(text, 'context');

const toCheck = (c: authzV1.CheckRequest): CheckRequest => {
  const t = c.tuple ?? { user: '', relation: '', object: '' };
  return {
    user: t.user,
    relation: t.relation,
    object: t.object,
    contextualTuples: c.contextualTuples.map(toTuple),
    context: toContext(c.contextJson ?? ''),
  };
};

/** The AuthzService methods that change nothing; every other one writes tuples and is announced (tuples-changed.ts). */
export const AUTHZ_READS: readonly (keyof typeof authzV1.AuthzServiceService)[] = [
  'getVersion',
  'check',
  'batchCheck',
  'checkPermission',
  'listRelations',
  'readTuples',
  'listObjects',
  'listUsers',
  'whoHasAccess',
  'permissionCatalog',
  'expand',
  'describeStore',
];

/** The AuthzService RPCs (proto/platformadmin/authz/v1/authz.proto). */
export function authzService(
  authorization: Authorization,
  store: authzV1.DescribeStoreResponse,
): ServiceBinding<typeof authzV1.AuthzServiceService> {
  return bindService(authzV1.AuthzServiceService, {
    getVersion: async () => versionOf('authz'),
    check: async (req, ctx) => {
      const { value, dependsOn } = await withDependsOn(ctx, () => measureCheck('check', () => authorization.check(toCheck(req))));
      return { allowed: value, dependsOn };
    },
    batchCheck: async (req, ctx) => {
      const asked = req.checks.map(toCheck);
      const { value, dependsOn } = await withDependsOn(ctx, () => measureCheck('batch_check', () => authorization.batchCheck(asked)));
      return { allowed: value, dependsOn };
    },
    checkPermission: async (req, ctx) => {
      const { value, dependsOn } = await withDependsOn(ctx, () =>
        measureCheck('check_permission', () => authorization.checkPermission(req.userId, req.permission, req.objectId)),
      );
      return { allowed: value, dependsOn };
    },
    listRelations: async (req) => ({ relations: await authorization.listRelations(req.user, req.object, req.relations) }),
    writeTuples: async (req) => (
      await authorization.write(req.writes.map(toTuple), req.deletes.map(toTuple), { idempotent: req.idempotent }),
      {}
    ),
    readTuples: async (req) => ({
      tuples: (
        await authorization.readTuples({
          object: req.object || undefined,
          relation: req.relation || undefined,
          user: req.user || undefined,
        })
      ).map(fromTuple),
    }),
    listObjects: async (req) => ({
      objects: await authorization.listObjects(req.user, req.relation, req.type, {
        contextualTuples: req.contextualTuples.map(toTuple),
        context: toContext(req.contextJson),
        maxResults: LIST_MAX_RESULTS,
      }),
    }),
    listUsers: async (req) => ({
      users: await authorization.listUsers({
        object: req.object,
        relation: req.relation,
        userFilters: req.userFilters.map((f) => ({ type: f.type, relation: f.relation || undefined })),
        contextualTuples: req.contextualTuples.map(toTuple),
        context: toContext(req.contextJson),
        maxResults: LIST_MAX_RESULTS,
      }),
    }),
    expand: async (req) => ({ tree: await authorization.expand(req.object, req.relation, req.contextualTuples.map(toTuple)) }),
    whoHasAccess: async (req, ctx) => {
      const { value, dependsOn } = await withDependsOn(ctx, () => authorization.whoHasAccess(req.object, req.owner || undefined));
      return {
        dependsOn,
        permissions: value.map((p) => ({
          permission: p.permission,
          description: p.description,
          relation: p.relation,
          users: p.users.map((u) => ({
            userId: u.userId,
            paths: u.paths.map((path) => ({
              kind: path.kind === 'relation' ? `relation:${path.relation}` : path.kind,
              teamId: path.teamId ?? 0,
              roleId: path.roleId ?? 0,
              until: path.until ?? '',
            })),
          })),
        })),
      };
    },
    describeStore: async () => store,
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
