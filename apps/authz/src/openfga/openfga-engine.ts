import {
  ClientWriteRequestOnDuplicateWrites,
  ClientWriteRequestOnMissingDeletes,
  ConsistencyPreference,
  CredentialsMethod,
  OpenFgaClient,
  type TupleKey,
} from '@openfga/sdk';
import { UnavailableError } from '@platform/errors';
import type { Logger } from '@platform/service-kit';
import { InvalidTupleError, TupleConflictError } from '../engine/errors';
import { modelFromDsl } from '../engine/model';
import type { AuthzEngine, CheckRequest, Tuple, TupleFilter, WriteOptions } from '../engine/types';

/** OpenFGA accepts at most this many tuples in one (atomic) Write. */
export const OPENFGA_WRITE_LIMIT = 100;

export interface OpenFgaSettings {
  apiUrl: string;
  storeId: string;
  apiToken?: string;
  /** The model in .fga DSL; written to the store when it differs from the latest model there. */
  modelDsl: string;
  log: Logger;
}

// Checks read the newest tuples: a write that returned is seen by the next check (read-your-writes).
const FRESH = { consistency: ConsistencyPreference.HigherConsistency };

/** The engine backed by an OpenFGA server through the official SDK. */
export class OpenFgaEngine implements AuthzEngine {
  private serverBatchCheck = true;

  /** Use connect(); the client is injectable so the chunking and undo logic can be tested without a server. */
  constructor(private readonly client: OpenFgaClient) {}

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
    return new OpenFgaEngine(client);
  }

  async check(r: CheckRequest): Promise<boolean> {
    const res = await guard(() =>
      this.client.check(
        { user: r.user, relation: r.relation, object: r.object, contextualTuples: r.contextualTuples as TupleKey[] },
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
        const checks = requests.map((r, i) => ({ ...toItem(r), correlationId: String(i) }));
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
        requests.map((r) => ({ ...toItem(r), contextualTuples: r.contextualTuples as TupleKey[] })),
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

  async listObjects(user: string, relation: string, type: string): Promise<string[]> {
    const res = await guard(() => this.client.listObjects({ user, relation, type }, FRESH));
    return [...res.objects].sort();
  }

  /**
   * Atomic up to OpenFGA's 100-tuple limit. Larger changes go in chunks of 100; when a chunk fails, the
   * chunks already applied are undone, so the change as a whole is all-or-nothing. An idempotent write
   * (OpenFGA 1.8+ `on_duplicate`/`on_missing: ignore`) is not undone: its caller retries it until it sticks,
   * and undoing would delete tuples that existed before it.
   */
  async write(writes: Tuple[], deletes: Tuple[], opts: WriteOptions = {}): Promise<void> {
    const conflict = opts.idempotent
      ? {
          conflict: {
            onDuplicateWrites: ClientWriteRequestOnDuplicateWrites.Ignore,
            onMissingDeletes: ClientWriteRequestOnMissingDeletes.Ignore,
          },
        }
      : {};
    const ops = [...writes.map((t) => ({ t, op: 'write' as const })), ...deletes.map((t) => ({ t, op: 'delete' as const }))];
    const applied: typeof ops = [];
    for (let i = 0; i < ops.length || i === 0; i += OPENFGA_WRITE_LIMIT) {
      const chunk = ops.slice(i, i + OPENFGA_WRITE_LIMIT);
      if (chunk.length === 0) return;
      try {
        await this.client.write(
          {
            writes: chunk.filter((c) => c.op === 'write').map((c) => c.t),
            deletes: chunk.filter((c) => c.op === 'delete').map((c) => c.t),
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
    for (let i = 0; i < applied.length; i += OPENFGA_WRITE_LIMIT) {
      const chunk = applied.slice(i, i + OPENFGA_WRITE_LIMIT);
      await this.client.write({
        writes: chunk.filter((c) => c.op === 'delete').map((c) => c.t),
        deletes: chunk.filter((c) => c.op === 'write').map((c) => c.t),
      });
    }
  }

  async readTuples(filter: TupleFilter): Promise<Tuple[]> {
    const out: Tuple[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await guard(() =>
        this.client.read(filter.object || filter.user ? filter : undefined, { ...FRESH, continuationToken, pageSize: 100 }),
      );
      out.push(...page.tuples.map((x) => ({ user: x.key.user, relation: x.key.relation, object: x.key.object })));
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
    contextualTuples: { tuple_keys: (r.contextualTuples ?? []) as TupleKey[] },
  };
}

/** Same type definitions and schema version (ids and conditions aside). */
function sameModel(
  a: { schema_version?: string; type_definitions?: unknown },
  b: { schema_version?: string; type_definitions?: unknown },
): boolean {
  return a.schema_version === b.schema_version && JSON.stringify(a.type_definitions) === JSON.stringify(b.type_definitions);
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
