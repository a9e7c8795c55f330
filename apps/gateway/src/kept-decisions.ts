import { decisionKey, type DecisionCache } from '@platform/bus';
import type { authzV1 } from '@platform/proto';
import type { CallOptions } from '@platform/service-kit';

type Decision = authzV1.CheckResponse;

interface AuthzChecks {
  checkPermission(req: authzV1.CheckPermissionRequest, ...rest: never[]): Promise<Decision>;
  check(req: authzV1.CheckRequest, ...rest: never[]): Promise<Decision>;
}

/**
 * The authz client with the edge's checks read through the gateway's decision cache (the same cache authz keeps,
 * `DecisionCache` in libs/bus: emptied by every tuple notice, served only after a fence and while the bus is
 * connected), so a request asking what an earlier one asked makes no call to authz. A check with contextual
 * tuples depends on more than the stored tuples and is always asked. Every other method is the client's own.
 */
export function withKeptDecisions<C extends AuthzChecks>(client: C, cache: DecisionCache): C {
  const checkPermission = client.checkPermission as (req: authzV1.CheckPermissionRequest, ...rest: unknown[]) => Promise<Decision>;
  const check = client.check as (req: authzV1.CheckRequest, ...rest: unknown[]) => Promise<Decision>;
  const kept = async (key: string, ask: () => Promise<Decision>, rest: unknown[]): Promise<Decision> => ({
    allowed: await cache.through(key, async () => (await ask()).allowed, undefined, (rest[0] as CallOptions | undefined)?.arrivedAt),
  });
  return {
    ...client,
    checkPermission: (req: authzV1.CheckPermissionRequest, ...rest: unknown[]) =>
      // A permission name is resolved through authz's fixed table: the name stands for what it resolves to.
      kept(decisionKey(`user:${req.userId}`, `permission ${req.permission}`, String(req.objectId)), () => checkPermission(req, ...rest), rest),
    check: (req: authzV1.CheckRequest, ...rest: unknown[]) =>
      // A check with contextual tuples or a condition context answers for that request only.
      req.contextualTuples.length > 0 || req.contextJson || !req.tuple
        ? check(req, ...rest)
        : kept(decisionKey(req.tuple.user, req.tuple.relation, req.tuple.object), () => check(req, ...rest), rest),
  };
}
