import {
  ClientWriteRequestOnDuplicateWrites,
  ClientWriteRequestOnMissingDeletes,
  ConsistencyPreference,
  CredentialsMethod,
  OpenFgaClient,
  type TupleKey,
} from '@openfga/sdk';
import { UnavailableError } from '@platform/errors';
import { chunks, type Logger } from '@platform/service-kit';
import { InvalidTupleError, TupleConflictError } from '../engine/errors';
import { modelFromDsl } from '../engine/model';
import { wrote } from '../engine/recorded';
import { tupleKey } from '../engine/tuple';
import type {
  AuthzEngine,
  CheckRequest,
  ListOptions,
  ListUsersRequest,
  RequestContext,
  Tuple,
  TupleFilter,
  WriteOptions,
} from '../engine/types';

/** OpenFGA accepts at most this many tuples in one (atomic) Write. */
export const OPENFGA_WRITE_LIMIT = 100;

export interface OpenFgaSettings {
  apiUrl: string;
  storeId: string;
  apiToken?: string;
  /** The model in .fga DSL; written to the store when it differs from the latest model there. */
  modelDsl: string;
  log: Logger;
  /** Condition parameters sent with every request, over the caller's (authz's `current_time`). */
  context?: () => RequestContext;
}

// Checks read the newest tuples: a write that returned is seen by the next check (read-your-writes).
const FRESH = { consistency: ConsistencyPreference.HigherConsistency };

/** The engine backed by an OpenFGA server through the official SDK. */
export class OpenFgaEngine implements AuthzEngine {
  private serverBatchCheck = true;

  /** Use connect(); the client is injectable so the chunking and undo logic can be tested without a server. */
  constructor(
    private readonly client: OpenFgaClient,
    private readonly supplied?: () => RequestContext,
  ) {}

  /** The request's context with what the engine supplies over it. */
  private contextOf(context: RequestContext | undefined): RequestContext | undefined {
    const merged = this.supplied ? { ...context, ...this.supplied() } : context;
    return merged && Object.keys(merged).length ? merged : undefined;
  }

  /** Connects, and writes the model when the store's latest model is not the same. */
  static async connect(s: OpenFgaSettings): Promise<OpenFgaEngine> {
    const client = new OpenFgaClient({
      apiUrl: s.apiUrl,
      storeId: s.storeId,
      ...(s.apiToken && { credentials: { method: CredentialsMethod.ApiToken, config: { token: s.apiToken } } }),
    });
    const wanted = modelFromDsl(s.modelDsl);
    const latest = await guard(() => client.readLatestAuthorizationModel()).catch(() => undefined);
    const current = latest?.authorization_model;
    if (current && sameModel(current, wanted)) {
      client.authorizationModelId = current.id;
    } else {
      const written = await guard(() => client.writeAuthorizationModel(wanted as never));
      client.authorizationModelId = written.authorization_model_id;
      s.log.info({ modelId: written.authorization_model_id }, 'authorization model written to OpenFGA');
    }
    return new OpenFgaEngine(client, s.context);
  }

  async check(r: CheckRequest): Promise<boolean> {
    const res = await guard(() =>
      this.client.check(
        {
          user: r.user,
          relation: r.relation,
          object: r.object,
          contextualTuples: toKeys(r.contextualTuples),
          context: this.contextOf(r.context),
        },
        FRESH,
      ),
    );
    return !!res.allowed;
  }

  /** Uses the server's BatchCheck (OpenFGA >= 1.8); older servers get parallel single checks. */
  async batchCheck(requests: CheckRequest[]): Promise<boolean[]> {
    if (requests.length === 0) return [];
    if (this.serverBatchCheck) {
      try {
        const checks = requests.map((r, i) => ({ ...toItem({ ...r, context: this.contextOf(r.context) }), correlationId: String(i) }));
        const res = await this.client.batchCheck({ checks }, FRESH);
        const byId = new Map(res.result.map((x) => [x.correlationId, x]));
        return requests.map((_, i) => {
          const one = byId.get(String(i));
          if (one?.error) throw new InvalidTupleError(one.error.message ?? 'check failed');
          return !!one?.allowed;
        });
      } catch (err) {
        if (!isUnsupported(err)) throw mapError(err);
        this.serverBatchCheck = false;
      }
    }
    const res = await guard(() =>
      this.client.clientBatchCheck(
        requests.map((r) => ({ ...toItem({ ...r, context: this.contextOf(r.context) }), contextualTuples: toKeys(r.contextualTuples) })),
        { ...FRESH, maxParallelRequests: 10 },
      ),
    );
    return res.result.map((x) => {
      if ('error' in x && x.error) throw mapError(x.error);
      return !!x.allowed;
    });
  }

  async listRelations(user: string, object: string, relations: string[]): Promise<string[]> {
    const held = await this.batchCheck(relations.map((relation) => ({ user, relation, object })));
    return relations.filter((_, i) => held[i]);
  }

  async listObjects(user: string, relation: string, type: string, options: ListOptions = {}): Promise<string[]> {
    const res = await guard(() =>
      this.client.listObjects(
        { user, relation, type, contextualTuples: toKeys(options.contextualTuples), context: options.context },
        FRESH,
      ),
    );
    // The server cuts the list at its own maximum (OPENFGA_LIST_OBJECTS_MAX_RESULTS); ours may be lower.
    return res.objects.slice(0, options.maxResults).sort();
  }

  async listUsers(r: ListUsersRequest): Promise<string[]> {
    const i = r.object.indexOf(':');
    const res = await guard(() =>
      this.client.listUsers(
        {
          object: { type: r.object.slice(0, i), id: r.object.slice(i + 1) },
          relation: r.relation,
          user_filters: r.userFilters.map((f) => (f.relation ? { type: f.type, relation: f.relation } : { type: f.type })),
          contextualTuples: toKeys(r.contextualTuples),
          context: this.contextOf(r.context),
        },
        FRESH,
      ),
    );
    // The server cuts the list at its own maximum (OPENFGA_LIST_USERS_MAX_RESULTS); ours may be lower.
    return res.users
      .slice(0, r.maxResults)
      .map((u) =>
        u.object
          ? `${u.object.type}:${u.object.id}`
          : u.userset
            ? `${u.userset.type}:${u.userset.id}#${u.userset.relation}`
            : `${u.wildcard!.type}:*`,
      )
      .sort();
  }

  /**
   * Atomic up to OpenFGA's 100-tuple limit. Larger changes go in chunks of 100; when a chunk fails, the
   * chunks already applied are undone, so the change as a whole is all-or-nothing. An idempotent write
   * (OpenFGA 1.8+ `on_duplicate`/`on_missing: ignore`) is not undone: its caller retries it until it sticks,
   * and undoing would delete tuples that existed before it.
   */
  async write(writes: Tuple[], deletes: Tuple[], opts: WriteOptions = {}): Promise<void> {
    // Named in the tuple notice whatever the server makes of it: a write that fails may have been applied in part.
    wrote(writes);
    wrote(deletes);
    const conflict = opts.idempotent
      ? {
          conflict: {
            onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore,
            onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore,
          },
        }
      : {};
    // A tuple both deleted and written (a change of its condition): OpenFGA refuses one tuple twice in a request, so
    // its delete goes in an earlier one, undone with the rest should a later one fail.
    const written = new Set(writes.map(tupleKey));
    const rewritten = deletes.filter((t) => written.has(tupleKey(t)));
    const ops = [
      ...rewritten.map((t) => ({ t, op: 'delete' as const })),
      ...writes.map((t) => ({ t, op: 'write' as const })),
      ...deletes.filter((t) => !written.has(tupleKey(t))).map((t) => ({ t, op: 'delete' as const })),
    ];
    const applied: typeof ops = [];
    const requests = [
      ...(rewritten.length ? [ops.slice(0, rewritten.length)] : []),
      ...chunks(ops.slice(rewritten.length), OPENFGA_WRITE_LIMIT),
    ];
    for (const chunk of requests) {
      try {
        await this.client.write(
          {
            writes: chunk.filter((c) => c.op === 'write').map((c) => toKey(c.t)),
            // A delete names the tuple only: OpenFGA refuses a condition on a delete.
            deletes: chunk.filter((c) => c.op === 'delete').map((c) => ({ user: c.t.user, relation: c.t.relation, object: c.t.object })),
          },
          conflict,
        );
        applied.push(...chunk);
      } catch (err) {
        if (!opts.idempotent) await this.undo(applied);
        throw mapError(err);
      }
    }
  }

  private async undo(applied: { t: Tuple; op: 'write' | 'delete' }[]): Promise<void> {
    // What was written goes first, then what was deleted comes back, in requests of their own: a tuple whose
    // condition changed is both, and OpenFGA refuses one tuple twice in a request.
    const written = applied.filter((c) => c.op === 'write');
    const deleted = applied.filter((c) => c.op === 'delete');
    for (const part of chunks(written, OPENFGA_WRITE_LIMIT)) {
      const deletes = part.map((c) => ({ user: c.t.user, relation: c.t.relation, object: c.t.object }));
      await this.client.write({ writes: [], deletes });
    }
    for (const part of chunks(deleted, OPENFGA_WRITE_LIMIT)) {
      await this.client.write({ writes: part.map((c) => toKey(c.t)), deletes: [] });
    }
  }

  async readTuples(filter: TupleFilter): Promise<Tuple[]> {
    const out: Tuple[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await guard(() =>
        this.client.read(filter.object || filter.user ? filter : undefined, { ...FRESH, continuationToken, pageSize: 100 }),
      );
      out.push(
        ...page.tuples.map((x) => ({
          user: x.key.user,
          relation: x.key.relation,
          object: x.key.object,
          ...(x.key.condition?.name && {
            condition: { name: x.key.condition.name, context: (x.key.condition.context ?? {}) as Record<string, unknown> },
          }),
        })),
      );
      continuationToken = page.continuation_token || undefined;
    } while (continuationToken);
    return out;
  }
}

function toItem(r: CheckRequest) {
  return {
    user: r.user,
    relation: r.relation,
    object: r.object,
    contextualTuples: { tuple_keys: toKeys(r.contextualTuples) ?? [] },
    ...(r.context && { context: r.context }),
  };
}

/** A tuple as OpenFGA's TupleKey, with its condition when it has one. */
function toKey(t: Tuple): TupleKey {
  const key: TupleKey = { user: t.user, relation: t.relation, object: t.object };
  if (t.condition?.name) key.condition = { name: t.condition.name, context: t.condition.context ?? {} };
  return key;
}

function toKeys(tuples: Tuple[] | undefined): TupleKey[] | undefined {
  return tuples?.map(toKey);
}

/** Same type definitions, conditions and schema version (ids aside). */
function sameModel(
  a: { schema_version?: string; type_definitions?: unknown; conditions?: unknown },
  b: { schema_version?: string; type_definitions?: unknown; conditions?: unknown },
): boolean {
  const conditions = (m: { conditions?: unknown }) => JSON.stringify(m.conditions ?? {});
  return (
    a.schema_version === b.schema_version &&
    JSON.stringify(a.type_definitions) === JSON.stringify(b.type_definitions) &&
    conditions(a) === conditions(b)
  );
}

function isUnsupported(err: unknown): boolean {
  const status = (err as { statusCode?: number }).statusCode;
  return status === 404 || status === 501;
}

/** OpenFGA's refusals in the platform's vocabulary; network failures are 503. */
function mapError(err: unknown): Error {
  const e = err as { statusCode?: number; apiErrorMessage?: string; message?: string };
  const message = e.apiErrorMessage ?? e.message ?? 'OpenFGA request failed';
  if (e.statusCode === 400) {
    return /already exists|did not exist|does not exist/.test(message) ? new TupleConflictError(message) : new InvalidTupleError(message);
  }
  if (e.statusCode === 409) return new TupleConflictError(message);
  if (!e.statusCode || e.statusCode >= 500) return new UnavailableError('OpenFGA is unavailable');
  return err as Error;
}

async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapError(err);
  }
}
