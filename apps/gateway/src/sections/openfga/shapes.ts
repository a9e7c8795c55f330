import { z } from 'zod';
import type { authzV1 } from '@platform/proto';
import { invalid } from './errors';

// OpenFGA's request bodies (openfga/api `openfga/v1/openfga_service.proto`, as its HTTP API takes them in JSON) and its
// answers, translated to and from authz's messages. Lengths are OpenFGA's (user 512, relation 50, object 256 bytes); a
// field OpenFGA does not take is 400, never read and ignored.

/** OpenFGA's ids (stores, models): ULIDs. */
export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const user = z.string().min(1).max(512);
const relation = z.string().min(1).max(50);
const object = z.string().min(1).max(256);
const type = z.string().min(1).max(254);
/** Values for the model's conditions: a JSON object. */
const context = z.record(z.string(), z.unknown());
/** Every read of the platform sees every change it acknowledged (docs/grpc.md, "Consistency"): each preference holds. */
const consistency = z.enum(['UNSPECIFIED', 'MINIMIZE_LATENCY', 'HIGHER_CONSISTENCY']).optional();
const modelId = z.string().regex(ULID, 'must be a ULID').optional();

/** A relationship: a stored or contextual tuple, with the condition it counts under. */
const TupleKey = z.strictObject({
  user,
  relation,
  object,
  condition: z.strictObject({ name: z.string().min(1).max(50), context: context.optional() }).optional(),
});
type TupleKey = z.infer<typeof TupleKey>;

/** OpenFGA takes at most 100 contextual tuples a request. */
const tupleList = z.array(TupleKey).max(100);
const ContextualTuples = z.strictObject({ tuple_keys: tupleList });

export const CheckBody = z.strictObject({
  tuple_key: z.strictObject({ user, relation, object }),
  contextual_tuples: ContextualTuples.optional(),
  context: context.optional(),
  authorization_model_id: modelId,
  consistency,
  // A trace of the resolution is not offered: only its absence is taken.
  trace: z.literal(false).optional(),
});
export type CheckBody = z.infer<typeof CheckBody>;

/** OpenFGA's default for the checks one batch-check takes (OPENFGA_MAX_CHECKS_PER_BATCH_CHECK), and the SDK's batch size. */
export const MAX_BATCH_CHECKS = 50;

export const BatchCheckBody = z.strictObject({
  checks: z
    .array(
      z.strictObject({
        tuple_key: z.strictObject({ user, relation, object }),
        contextual_tuples: ContextualTuples.optional(),
        context: context.optional(),
        correlation_id: z.string().regex(/^[\w-]{1,36}$/, 'must be 1 to 36 letters, digits, _ or -'),
      }),
    )
    .min(1)
    .max(MAX_BATCH_CHECKS),
  authorization_model_id: modelId,
  consistency,
});
export type BatchCheckBody = z.infer<typeof BatchCheckBody>;

export const ListObjectsBody = z.strictObject({
  type,
  relation,
  user,
  contextual_tuples: ContextualTuples.optional(),
  context: context.optional(),
  authorization_model_id: modelId,
  consistency,
});

export const ListUsersBody = z.strictObject({
  object: z.strictObject({ type, id: z.string().min(1).max(256) }),
  relation,
  user_filters: z.array(z.strictObject({ type, relation: z.string().max(50).optional() })).min(1),
  // ListUsers takes its contextual tuples as a list, not as `{tuple_keys}`.
  contextual_tuples: tupleList.optional(),
  context: context.optional(),
  authorization_model_id: modelId,
  consistency,
});

export const ExpandBody = z.strictObject({
  tuple_key: z.strictObject({ object, relation }),
  contextual_tuples: ContextualTuples.optional(),
  authorization_model_id: modelId,
  consistency,
});

/** OpenFGA's page sizes: 1 to 100, 50 when none is given. */
export const PAGE_SIZE = { default: 50, max: 100 };
const pageSize = z.number().int().min(1).max(PAGE_SIZE.max).optional();

export const ReadBody = z.strictObject({
  tuple_key: z.strictObject({ user: user.optional(), relation: relation.optional(), object: object.optional() }).optional(),
  page_size: pageSize,
  continuation_token: z.string().max(1024).optional(),
  consistency,
});

/** A query's page size (`?page_size=`), as ListStores and ReadAuthorizationModels take it. */
export const PageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(PAGE_SIZE.max).optional(),
  continuation_token: z.string().max(1024).optional(),
});

/** The body (or query) as the schema reads it, else OpenFGA's 400 naming the first field that is wrong. */
export function parsed<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.length ? `${what}.${issue.path.join('.')}` : what;
  const unknown = issue.code === 'unrecognized_keys' ? `: ${issue.keys.join(', ')} is not a field OpenFGA takes here` : '';
  throw invalid(`invalid ${field}: ${issue.message}${unknown}`);
}

/** A tuple as authz takes it: the condition's values as JSON text. */
export function tupleKeyOf(t: TupleKey): authzV1.TupleKey {
  return {
    user: t.user,
    relation: t.relation,
    object: t.object,
    ...(t.condition && { condition: { name: t.condition.name, contextJson: JSON.stringify(t.condition.context ?? {}) } }),
  };
}

export const contextualOf = (c: { tuple_keys: TupleKey[] } | undefined): authzV1.TupleKey[] => (c?.tuple_keys ?? []).map(tupleKeyOf);

/** A context as authz takes it: JSON text, empty for none. */
export const contextJsonOf = (c: Record<string, unknown> | undefined): string => (c ? JSON.stringify(c) : '');

/** A check as authz's CheckRequest. */
export function checkOf(c: {
  tuple_key: { user: string; relation: string; object: string };
  contextual_tuples?: { tuple_keys: TupleKey[] };
  context?: Record<string, unknown>;
}): authzV1.CheckRequest {
  return {
    tuple: { user: c.tuple_key.user, relation: c.tuple_key.relation, object: c.tuple_key.object },
    contextualTuples: contextualOf(c.contextual_tuples),
    contextJson: contextJsonOf(c.context),
  };
}

/** A stored tuple as OpenFGA's Read answers it. The platform does not keep when a tuple was written: no `timestamp`. */
export function tupleJson(t: authzV1.TupleKey) {
  return {
    key: {
      user: t.user,
      relation: t.relation,
      object: t.object,
      ...(t.condition && { condition: { name: t.condition.name, context: JSON.parse(t.condition.contextJson || '{}') as object } }),
    },
  };
}

/** A user of a ListUsers answer (`user:7`, `user:*`, `team:3#member`) as OpenFGA's User. */
export function userJson(name: string) {
  const [typeAndId, rel] = name.split('#');
  const colon = typeAndId.indexOf(':');
  const [t, id] = [typeAndId.slice(0, colon), typeAndId.slice(colon + 1)];
  if (rel !== undefined) return { userset: { type: t, id, relation: rel } };
  if (id === '*') return { wildcard: { type: t } };
  return { object: { type: t, id } };
}

type TreeNode = authzV1.UsersetTree_Node;

/** OpenFGA's JSON of a userset tree's node (its `Node`: `name` and one of `leaf`, `union`, `intersection`, `difference`). */
export function nodeJson(node: TreeNode | undefined): Record<string, unknown> | undefined {
  if (!node) return undefined;
  const v = node.value;
  if (!v) return { name: node.name };
  switch (v.$case) {
    case 'union':
    case 'intersection':
      return { name: node.name, [v.$case]: { nodes: v.value.nodes.map(nodeJson) } };
    case 'difference':
      return { name: node.name, difference: { base: nodeJson(v.value.base), subtract: nodeJson(v.value.subtract) } };
    case 'leaf': {
      const leaf = v.value.value;
      if (leaf?.$case === 'users') return { name: node.name, leaf: { users: { users: leaf.value.users } } };
      if (leaf?.$case === 'computed') return { name: node.name, leaf: { computed: { userset: leaf.value.userset } } };
      if (leaf?.$case === 'tupleToUserset')
        return {
          name: node.name,
          leaf: {
            tupleToUserset: { tupleset: leaf.value.tupleset, computed: leaf.value.computed.map((c) => ({ userset: c.userset })) },
          },
        };
      return { name: node.name, leaf: {} };
    }
  }
}

/** The store as OpenFGA's Store. */
export function storeJson(d: authzV1.DescribeStoreResponse) {
  return { id: d.storeId, name: d.storeName, created_at: d.createdAt, updated_at: d.createdAt };
}

/** The model as OpenFGA's AuthorizationModel: its id, then the JSON authz keeps. */
export function modelJson(d: authzV1.DescribeStoreResponse): Record<string, unknown> {
  return { id: d.authorizationModelId, ...(JSON.parse(d.authorizationModelJson) as Record<string, unknown>) };
}
