import bodyParser from 'body-parser';
import { z } from 'zod';
import { DomainError } from '@platform/errors';
import { authzV1 } from '@platform/proto';
import { APP_TOKEN_ISSUER, createClient, jwtPart, type CallOptions, type Logger, type PromiseClient } from '@platform/service-kit';
import { ApiRequest, type Incoming, type Outgoing, type Trust } from '../../api-request';
import type { GatewayConfig } from '../../config';
import { sendBody } from '../../replies';
import { routeTable } from '../../route-table';
import { assertNoNul } from '../../validation';
import { invalid, modelNotFound, openFgaAnswer, OpenFgaError, storeNotFound, undefinedEndpoint } from './errors';
import {
  BatchCheckBody,
  CheckBody,
  checkOf,
  contextJsonOf,
  contextualOf,
  ExpandBody,
  ListObjectsBody,
  ListUsersBody,
  modelJson,
  nodeJson,
  PAGE_SIZE,
  PageQuery,
  parsed,
  ReadBody,
  storeJson,
  tupleJson,
  tupleKeyOf,
  ULID,
  userJson,
} from './shapes';

// OpenFGA's HTTP API for service accounts, under /openfga on the HTTP port (docs/grpc.md, "OpenFGA's SDKs"): an
// official SDK's `apiUrl` is `<platform>/openfga`, its API token a service account's token. Each read is authz's public
// gRPC method of the same name, called as the service account itself (its token is the call's credential, never the
// gateway's own), so authz authenticates the token and holds the call to the method's policy exactly as it holds a call
// over gRPC: what the account may ask, and what it is shown of the answer. Writes are the platform's own: refused with
// 403 (decision D105).

/** The API's root on the HTTP port. */
export const OPENFGA_ROOT = '/openfga';
/** The root at the start of a request's URL, in any case; then the path below it and the query. */
const UNDER_OPENFGA_ROOT = /^(\/openfga)(?=[/?]|$)([^?]*)\??(.*)$/is;

/** The longest token looked at (a Kubernetes ServiceAccount token is a JWT of a few KB); longer ones are refused unasked. */
const MAX_TOKEN_LENGTH = 8192;

type Authz = PromiseClient<typeof authzV1.AuthzServiceService>;

/** One request as its row handles it: the request, and authz called with the caller's own token. */
class Call {
  private described?: Promise<authzV1.DescribeStoreResponse>;
  /** Whether authz took the token: set by the first call it answered. */
  authenticated = false;

  constructor(
    readonly req: ApiRequest,
    private readonly client: Authz,
    private readonly opts: CallOptions,
  ) {}

  /** authz's method, called as the caller. */
  authz<K extends keyof typeof authzV1.AuthzServiceService>(method: K, request: Parameters<Authz[K]>[0]): ReturnType<Authz[K]> {
    const answer = (this.client[method] as (r: unknown, o: CallOptions) => Promise<unknown>)(request, this.opts);
    // An answer, or a refusal authz made once it knew the caller (the policy's 403, an invalid argument's 400).
    answer.then(
      () => (this.authenticated = true),
      (err: unknown) => {
        if (err instanceof DomainError && err.httpStatus !== 401 && err.httpStatus < 500) this.authenticated = true;
      },
    );
    return answer as ReturnType<Authz[K]>;
  }

  /** The store and the model, asked once (as any call, it authenticates the caller). */
  store(): Promise<authzV1.DescribeStoreResponse> {
    return (this.described ??= this.authz('describeStore', {}));
  }

  /** The path's store id, once it is the store's: 400 when it is no ULID, 404 when it is another (after authentication). */
  async ownStore(): Promise<authzV1.DescribeStoreResponse> {
    const id = String(this.req.params.store_id);
    if (!ULID.test(id)) throw invalid(`invalid store_id: value does not match regex pattern "${ULID.source}"`);
    const store = await this.store();
    if (id !== store.storeId) throw storeNotFound();
    return store;
  }

  /**
   * A read of the store, and the model named (when one is): the read is asked at once, beside the store's description,
   * and answered only once the path names the store and the model is the store's (OpenFGA's 404 and 400 otherwise).
   */
  async inStore<T>(read: () => Promise<T>, modelId?: string): Promise<T> {
    const answer = read();
    answer.catch(() => undefined);
    const store = await this.ownStore();
    if (modelId !== undefined && modelId !== store.authorizationModelId) throw modelNotFound(modelId);
    return answer;
  }
}

/** A row: its method, its path below the root, and what it answers (200 and JSON; STREAMED when it wrote its answer). */
interface Row {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  answer(call: Call): Promise<unknown>;
}

const STREAMED = Symbol('streamed');

/** The token of `Authorization: Bearer <t>` (or `token <t>`, as the REST API takes it). */
function tokenOf(req: ApiRequest): string {
  const header = req.get('authorization');
  if (!header) throw new OpenFgaError(401, 'bearer_token_missing', 'missing bearer token');
  const m = /^(?:bearer|token)\s+(\S+)$/i.exec(header);
  // The platform's own credential is for its apps' gRPC calls: it opens nothing on the HTTP port.
  if (!m || m[1].length > MAX_TOKEN_LENGTH || jwtPart(m[1], 1)?.iss === APP_TOKEN_ISSUER)
    throw new OpenFgaError(401, 'unauthenticated', 'unauthenticated');
  return m[1];
}

/** A query of a list OpenFGA pages: a page size of 1 to 100, and no continuation token (the list is one page). */
function onePage(query: Record<string, unknown>, fields: z.ZodRawShape = {}): Record<string, unknown> {
  const q = parsed(PageQuery.extend(fields).strict(), query, 'query');
  if (q.continuation_token) throw invalid('Invalid continuation token', 'invalid_continuation_token');
  return q;
}

/** A write of the platform's own (or its change log): refused to every caller, once it is authenticated (and its store found). */
const platformsOwn =
  (what: string) =>
  async (call: Call): Promise<never> => {
    await (call.req.params.store_id === undefined ? call.store() : call.ownStore());
    throw new OpenFgaError(
      403,
      'forbidden',
      `${what} is the platform's own: relationships change through the platform (its REST API and console), never through OpenFGA's API`,
    );
  };

/** An offset into a list as the continuation token Read answers (opaque to the caller). */
const tokenAt = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString('base64url');

function offsetOf(token: string | undefined): number {
  if (!token) return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { offset?: unknown };
    if (Number.isSafeInteger(offset) && (offset as number) >= 0) return offset as number;
  } catch {
    // answered below
  }
  throw invalid('Invalid continuation token', 'invalid_continuation_token');
}

/** Whether authz refused the request itself as invalid (one check of a batch OpenFGA answers with its own error). */
const isInputError = (err: unknown) => err instanceof DomainError && (err.httpStatus === 400 || err.httpStatus === 422);

const sortKey = (t: authzV1.TupleKey) => `${t.object}\u0000${t.relation}\u0000${t.user}`;

const ROWS: Row[] = [
  {
    method: 'get',
    path: '/stores',
    async answer(call) {
      const { name } = onePage(call.req.query, { name: z.string().max(64).optional() }) as { name?: string };
      const store = await call.store();
      return { stores: name === undefined || name === store.storeName ? [storeJson(store)] : [], continuation_token: '' };
    },
  },
  { method: 'post', path: '/stores', answer: platformsOwn('creating a store') },
  {
    method: 'get',
    path: '/stores/:store_id',
    async answer(call) {
      parsed(z.strictObject({}), call.req.query, 'query');
      return storeJson(await call.ownStore());
    },
  },
  { method: 'delete', path: '/stores/:store_id', answer: platformsOwn('deleting the store') },
  {
    method: 'get',
    path: '/stores/:store_id/authorization-models',
    async answer(call) {
      onePage(call.req.query);
      return { authorization_models: [modelJson(await call.ownStore())], continuation_token: '' };
    },
  },
  { method: 'post', path: '/stores/:store_id/authorization-models', answer: platformsOwn('writing an authorization model') },
  {
    method: 'get',
    path: '/stores/:store_id/authorization-models/:id',
    async answer(call) {
      const id = String(call.req.params.id);
      if (!ULID.test(id)) throw invalid(`invalid id: value does not match regex pattern "${ULID.source}"`);
      const store = await call.ownStore();
      if (id !== store.authorizationModelId) throw modelNotFound(id);
      return { authorization_model: modelJson(store) };
    },
  },
  {
    method: 'get',
    path: '/stores/:store_id/assertions/:id',
    async answer(call) {
      const id = String(call.req.params.id);
      if (!ULID.test(id)) throw invalid(`invalid authorization_model_id: value does not match regex pattern "${ULID.source}"`);
      const store = await call.ownStore();
      if (id !== store.authorizationModelId) throw modelNotFound(id);
      // The model's tests are the platform's own (apps/authz/model/platform.fga.yaml); the store keeps no assertions.
      return { authorization_model_id: id, assertions: [] };
    },
  },
  { method: 'put', path: '/stores/:store_id/assertions/:id', answer: platformsOwn('writing assertions') },
  { method: 'post', path: '/stores/:store_id/write', answer: platformsOwn('writing tuples') },
  { method: 'get', path: '/stores/:store_id/changes', answer: platformsOwn('the change log') },
  {
    method: 'post',
    path: '/stores/:store_id/check',
    async answer(call) {
      const body = parsed(CheckBody, call.req.body, 'CheckRequest');
      const { allowed } = await call.inStore(() => call.authz('check', checkOf(body)), body.authorization_model_id);
      return { allowed, resolution: '' };
    },
  },
  {
    method: 'post',
    path: '/stores/:store_id/batch-check',
    async answer(call) {
      const body = parsed(BatchCheckBody, call.req.body, 'BatchCheckRequest');
      const ids = body.checks.map((c) => c.correlation_id);
      const twice = ids.find((id, i) => ids.indexOf(id) !== i);
      if (twice !== undefined) throw invalid(`duplicate correlation_id provided: ${twice}`);
      const checks = body.checks.map(checkOf);
      const results = await call.inStore(async () => {
        try {
          // One call, held to BatchCheck's policy: an account that may not ask one of the checks is refused them all.
          const { allowed } = await call.authz('batchCheck', { checks });
          return checks.map((_, i): Record<string, unknown> => ({ allowed: allowed[i] === true }));
        } catch (err) {
          if (!isInputError(err)) throw err;
          // A check authz finds invalid is answered with its error, and the others with theirs, as OpenFGA answers.
          return Promise.all(
            checks.map((c) =>
              call.authz('check', c).then(
                ({ allowed }): Record<string, unknown> => ({ allowed }),
                (e: unknown) => {
                  if (!isInputError(e)) throw e;
                  return { error: { input_error: 'validation_error', message: (e as Error).message } };
                },
              ),
            ),
          );
        }
      }, body.authorization_model_id);
      return { result: Object.fromEntries(ids.map((id, i) => [id, results[i]])) };
    },
  },
  {
    method: 'post',
    path: '/stores/:store_id/list-objects',
    async answer(call) {
      const body = parsed(ListObjectsBody, call.req.body, 'ListObjectsRequest');
      return call.inStore(() => listObjects(call, body), body.authorization_model_id);
    },
  },
  {
    method: 'post',
    path: '/stores/:store_id/streamed-list-objects',
    async answer(call) {
      const body = parsed(ListObjectsBody, call.req.body, 'StreamedListObjectsRequest');
      const { objects } = await call.inStore(() => listObjects(call, body), body.authorization_model_id);
      // One message a line, as OpenFGA streams them (the list is answered whole by authz, so it is sent at once).
      const res = call.req.res;
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(objects.map((object) => `${JSON.stringify({ result: { object } })}\n`).join(''));
      return STREAMED;
    },
  },
  {
    method: 'post',
    path: '/stores/:store_id/list-users',
    async answer(call) {
      const body = parsed(ListUsersBody, call.req.body, 'ListUsersRequest');
      const { users } = await call.inStore(
        () =>
          call.authz('listUsers', {
            object: `${body.object.type}:${body.object.id}`,
            relation: body.relation,
            userFilters: body.user_filters.map((f) => ({ type: f.type, relation: f.relation ?? '' })),
            contextualTuples: (body.contextual_tuples ?? []).map(tupleKeyOf),
            contextJson: contextJsonOf(body.context),
          }),
        body.authorization_model_id,
      );
      return { users: users.map(userJson) };
    },
  },
  {
    method: 'post',
    path: '/stores/:store_id/expand',
    async answer(call) {
      const body = parsed(ExpandBody, call.req.body, 'ExpandRequest');
      const { tree } = await call.inStore(
        () =>
          call.authz('expand', {
            object: body.tuple_key.object,
            relation: body.tuple_key.relation,
            contextualTuples: contextualOf(body.contextual_tuples),
          }),
        body.authorization_model_id,
      );
      return { tree: { root: nodeJson(tree?.root) } };
    },
  },
  {
    method: 'post',
    path: '/stores/:store_id/read',
    async answer(call) {
      const body = parsed(ReadBody, call.req.body, 'ReadRequest');
      const offset = offsetOf(body.continuation_token);
      const size = body.page_size ?? PAGE_SIZE.default;
      const key = body.tuple_key ?? {};
      const { tuples } = await call.inStore(() =>
        call.authz('readTuples', { object: key.object ?? '', relation: key.relation ?? '', user: key.user ?? '' }),
      );
      // Pages of one order, read again for each page: a tuple written or deleted between pages may shift them, as
      // OpenFGA guarantees no order either.
      const sorted = [...tuples].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
      const page = sorted.slice(offset, offset + size);
      return { tuples: page.map(tupleJson), continuation_token: offset + size < sorted.length ? tokenAt(offset + size) : '' };
    },
  },
];

function listObjects(call: Call, body: z.infer<typeof ListObjectsBody>) {
  return call.authz('listObjects', {
    user: body.user,
    relation: body.relation,
    type: body.type,
    contextualTuples: contextualOf(body.contextual_tuples),
    contextJson: contextJsonOf(body.context),
  });
}

/** OpenFGA's API as the HTTP port serves it under /openfga, and what it holds open (its client of authz). */
export interface OpenFgaApi {
  /** The request when its URL is under /openfga (and then answered, whatever happens), else false. */
  serve(req: Incoming, res: Outgoing, trust: Trust): boolean;
  close(): void;
}

/**
 * The API, with its own client of authz: one that always goes over the network, so that each call carries the
 * caller's token as its credential and authz admits it as that service account. (In one process an in-process call
 * would be the gateway's own, which authz admits as a platform app, to every method and answer.)
 */
export function openFgaApi(
  config: Pick<GatewayConfig, 'AUTHZ_GRPC_ADDR' | 'BACKEND_DEADLINE_MS' | 'GRPC_MAX_MESSAGE_BYTES'>,
  log: Logger,
): OpenFgaApi {
  const client = createClient(authzV1.AuthzServiceService, config.AUTHZ_GRPC_ADDR, {
    name: 'authz',
    deadlineMs: config.BACKEND_DEADLINE_MS,
    maxMessageBytes: config.GRPC_MAX_MESSAGE_BYTES,
    inProcess: false,
  });
  const readJson = bodyParser.json({ limit: '1mb' });
  const table = routeTable(
    ROWS.map((row) => ({
      method: row.method,
      path: row.path,
      handler: async (req: ApiRequest) => {
        req.res.locals.route = `${OPENFGA_ROOT}${row.path}`;
        const metadata = { authorization: `Bearer ${tokenOf(req)}` };
        const call = new Call(req, client, { metadata, requestId: req.requestId, deadlineMs: config.BACKEND_DEADLINE_MS });
        try {
          await new Promise<void>((resolve, reject) => readJson(req.raw, req.res, (err?: unknown) => (err ? reject(err) : resolve())));
          assertNoNul(req);
          const body = await row.answer(call);
          if (body === STREAMED) return;
          req.res.statusCode = 200;
          sendBody(req.res, body);
        } catch (err) {
          // What is wrong with a request is said only to a caller authz knows: first the token, then the rest.
          if (!call.authenticated && !(err instanceof OpenFgaError && err.status === 401)) await call.store();
          throw err;
        }
      },
    })),
  );

  const fail = (err: unknown, req: Incoming, res: Outgoing) => {
    const answer = openFgaAnswer(err);
    if (answer.log && answer.status !== 503) log.error({ err, requestId: req.requestId }, 'OpenFGA API request failed');
    if (res.headersSent) return void res.destroy();
    res.statusCode = answer.status;
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    sendBody(res, answer.body);
  };

  return {
    serve(req, res, trust) {
      const under = UNDER_OPENFGA_ROOT.exec(req.url ?? '');
      if (!under) return false;
      const api = new ApiRequest(req, res, under[1], under[2] || '/', under[3], trust);
      Promise.resolve()
        .then(() => table.serve(api) ?? Promise.reject(undefinedEndpoint(api.method, `${OPENFGA_ROOT}${api.path}`)))
        .catch((err: unknown) => fail(err, req, res));
      return true;
    },
    close: () => client.close(),
  };
}
