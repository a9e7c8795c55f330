import type { ApiRequest as Request } from './api-request';
import type { z } from 'zod';
import type { orgsTeamsV1, PermissionName, PermissionObjectType, PermissionOn } from '@platform/proto';
import type { BackendName, Calls, Kept } from './backends';
import type { GatewayConfig } from './config';
import type { Tag } from './api-names';
import type { Gate } from './gating';
import type { MultipartSpec } from './multipart';
import type { AccessScope } from '@platform/service-kit';

/**
 * One row of the gateway's route table says everything a reader needs: method, path, summary, spec
 * section, who may call, deployment gate, the backend app answering, the schemas of path parameters,
 * query, body and success response, the object the route acts on, and every authorization requirement.
 * The edge (edge.ts) does what the row declares — parsing, authentication, the `org` context, target
 * resolution, the checks, request ids, deadlines, errors — so a handler is only the translation to RPCs.
 */

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call: anyone (a token, when sent, must still be valid), a caller with a token (header
 * `Authorization: token <t>`, or `?token=` / `?access_token=`), or HTTP Basic credentials.
 */
export type Auth = 'public' | 'token' | 'basic';

/**
 * The one use a token may be limited to (docs/authentication.md): `license-proxy` is the token of a license
 * proxy an installer set up (`POST /user/license-proxy`), which may only issue licenses and read the CRL and CA.
 */
export type TokenUseName = 'license-proxy';

/**
 * The `org` query parameter: required (400 when absent), or optional; `account` is optional
 * and may also name a user account ("selects the owner account"), when no organization has that slug.
 * An `org` the caller cannot act for (unknown, or private and the caller not a member) is 403, the same answer for
 * both; site admins, who see every organization, get 404 for an unknown one (authentication.ts `resolveOrg`).
 */
export type OrgMode = 'required' | 'optional' | 'account';

/** The organization of the `org` query context, resolved once per request as the caller may see it. */
export interface OrgRef {
  id: number;
  name: string;
  /** `user` only in the `account` mode, for a user account's slug. */
  type?: 'organization' | 'user';
}

export type User = orgsTeamsV1.User;

/**
 * The one use a token is limited to (docs/authentication.md): the use's name and the account it acts for.
 * `license-proxy`: only the routes a license proxy calls, acting for that organization or user.
 */
export interface TokenScope {
  name: string;
  accountId: number;
}

/** What the edge knows of every request; targets resolve with it, handlers get it too. */
export interface EdgeContext {
  /**
   * Backend calls, bound to this request (every call carries its request id and its deadline): writes and the reads
   * no read model keeps, always asked.
   */
  backends: Calls;
  /** Kept reads (the backends' read models), fenced for this request: `kept.<backend>.<service>.<read>`. */
  kept: Kept;
  config: GatewayConfig;
  requestId: string;
  /** When the request arrived (`performance.now()`): kept answers it reads fence once, for all of them (Bus.caughtUp). */
  arrivedAt: number;
  /** The raw request, for what a row cannot declare: headers such as If-None-Match, the origin of signed URLs. */
  req: Request;
  caller: User | undefined;
  org: OrgRef | undefined;
  /** What the caller's token is limited to, when it is a scoped token (docs/authentication.md); the row listed it. */
  scope: TokenScope | undefined;
  /**
   * Forgets cached tokens at once (all, or those of some accounts): a route that deletes or replaces tokens
   * calls it so its own gateway refuses them on the very next request; other gateways hear orgs-teams' notice.
   */
  forgetTokens(userIds?: number[]): void;
  /**
   * The request's audit event when the row is audited and someone signed in: a write that can record it in its own
   * statement is handed `audit.event` and answers whether it did (recordedWith); the edge records it otherwise.
   */
  audit?: AuditWith;
}

/**
 * A request's audit event, made before its handler runs (audit.ts `auditEventOf`): a handler whose write can record it
 * in the write's own statement hands `event` to that call and sets `recorded` from its answer (`recordedWith`).
 */
export interface AuditWith {
  event: orgsTeamsV1.AuditEvent;
  recorded: boolean;
}

/** The object a route acts on, resolved once by the edge and handed to the handler as `ctx.target`. */
export interface Target<K extends PermissionObjectType, V, P> {
  /** The model type requirements on the target are checked on. */
  type: K;
  /** How docs/routes.md names it, e.g. "organization `{orgname}`". */
  describe: string;
  resolve(params: P, ctx: EdgeContext): Promise<V>;
  /** The object id checks are made on. */
  id(value: V): number;
  /** The id authz knows the object by for relation requirements, when it is not `id` (a cluster by its UID). */
  authzId?(value: V): string;
}

/** A tuple authz is told for one check only, e.g. the owner of a contract another service answered. */
export interface TupleKey {
  user: string;
  relation: string;
  object: string;
}

/** An object as authz knows it: `type:id`, with the tuples that hold for it during this check only. */
export interface AuthzObject {
  type: string;
  id: number | string;
  contextualTuples?: TupleKey[];
}

/**
 * An object other than the row's target that a requirement is checked on, found by the edge with `resolve` when
 * the requirement is reached: the organization of the target team, the cluster a contract binds. `undefined` when
 * there is no such object (a requirement on it then does not hold); errors (404 for what the path names) propagate.
 */
export interface ObjectResolver<I, C> {
  /** How docs/routes.md and the API document name it, e.g. "the organization of team `{teamid}`". */
  describe: string;
  resolve(input: I, ctx: C): Promise<AuthzObject | undefined>;
}

/** A refusal's message: fixed, or naming what the request named. */
export type Denied<I, C> = string | ((input: I, ctx: C) => string | Promise<string>);

/**
 * A condition on data the request names or the edge resolved, that no permission expresses: "uid is the caller",
 * "the team is not the owner team". `holds` may also throw: the error of something it could not find (404), or a
 * refusal naming which of several objects failed (the cluster of a registration that is another owner's).
 */
export interface DataCheck<I, C> {
  /** How docs/routes.md and the API document name it. */
  check: string;
  holds(input: I, ctx: C): boolean | Promise<boolean>;
  /** 403 unless said (401 where the spec answers "not authenticated"). */
  status?: 401 | 403;
  denied: Denied<I, C>;
}

/**
 * An authorization requirement the edge checks (`on` and `permission` read as undefined on those without them):
 * - a permission of the authz catalog on the target, the `org` context or the site. On a row whose `org` is
 *   optional, a requirement on the `org` context holds when the request names none: it then acts on the caller's
 *   own account;
 * - a permission, or a relation of the authz model, on the target or on another object found by a resolver;
 * - a data check;
 * - `anyOf`: alternatives, the first that holds lets the request through (a site admin's fallback); refused with
 *   `denied`, else with the refusal of the last alternative.
 */
export type Requirement<K extends PermissionObjectType, I = any, C = any> =
  | { on: 'target'; permission: PermissionOn<K>; denied?: string }
  | { on: 'org'; permission: PermissionOn<'organization'>; denied?: string }
  | { on: 'site'; permission: PermissionOn<'site'>; denied?: string }
  | { on: 'target'; relation: string; permission?: undefined; denied?: Denied<I, C> }
  | { on: ObjectResolver<I, C>; permission: PermissionName; denied?: Denied<I, C> }
  | { on: ObjectResolver<I, C>; relation: string; permission?: undefined; denied?: Denied<I, C> }
  | (DataCheck<I, C> & { on?: undefined; permission?: undefined })
  | { anyOf: Requirement<K, I, C>[]; on?: undefined; permission?: undefined; denied?: Denied<I, C> };

/**
 * An error answer a row documents besides those its declarations give (400 for the path, 401, 403 for a requirement,
 * 422 for the body): what the backend answers, such as 404 for an unknown set or 409 for a name in use.
 */
export interface ErrorSpec {
  status: number;
  /** What it answers, as it reads after the status: "for an unknown set", "when the quota is used up". */
  description: string;
}

/**
 * What a request gives people of an organization: the permissions a custom role will carry, the roles a team is
 * given, or the roles of the team a user is put into. No one gives more than they hold: the caller must hold every
 * permission given, on that organization (docs/authorization.md). The edge asks authz once
 * (`RolesService.CheckGrant`) after the body is parsed, and refuses with 403 naming what the caller lacks.
 */
export interface Grant {
  orgId: number;
  /** Permissions given as such: the set a role will carry. */
  permissions?: { namespace: string; action: string }[];
  /** Roles given whole: every permission they carry. */
  roleIds?: number[];
  /** Teams whose roles are given whole: a user is put into them. */
  teamIds?: number[];
  /** Names the change in the refusal: "<what> would give permissions you do not hold: ...". */
  what: string;
}

/** A row's grant requirement: what its requests give (none: undefined), from the parsed request and the target. */
export interface GrantRequirement<I, C> {
  /** How docs/routes.md and the API document name it. */
  describe: string;
  of(input: I, ctx: C): Grant | undefined;
}

/** What a handler answers; the edge writes it (JSON, bytes, a stream of JSON, or nothing). */
export interface Reply<R> {
  status?: number;
  body?: R | JsonText | JsonStream;
  headers?: Record<string, string>;
}

/**
 * A body that is already JSON, as UTF-8 bytes, e.g. a document Postgres wrote (the usage views,
 * docs/usage-reports.md): the edge sends the bytes as they are instead of parsing and serialising them again,
 * which for a view of a few hundred kilobytes is most of the gateway's time. With VALIDATE_RESPONSES (tests) it is
 * still parsed and checked against the row's response schema.
 */
export class JsonText {
  /** The bytes as a Buffer over the same memory (a backend's Uint8Array is not copied). */
  readonly bytes: Buffer;

  constructor(utf8: Uint8Array) {
    this.bytes = bytesOf(utf8);
  }
}

/**
 * A JSON body that a backend streams in pieces (the usage views, docs/usage-reports.md): the edge writes each
 * piece as it comes, at the client's pace, so a view of any size passes the gateway in bounded memory. The first
 * piece has come before the handler answers, so a backend's refusal (400, 404) is still the response's status; a
 * failure after it can only cut the response off.
 */
export class JsonStream {
  private constructor(
    readonly first: Buffer,
    readonly rest: AsyncIterator<{ json: Uint8Array }>,
  ) {}

  /** Waits for a stream's first piece. */
  static async of(messages: AsyncIterable<{ json: Uint8Array }>): Promise<JsonStream> {
    const it = messages[Symbol.asyncIterator]();
    const first = await it.next();
    return new JsonStream(first.done ? Buffer.alloc(0) : bytesOf(first.value.json), it);
  }

  /** The pieces after the first; stopping early stops the backend's stream. */
  async *more(): AsyncGenerator<Buffer> {
    let done = false;
    try {
      for (;;) {
        const next = await this.rest.next();
        if ((done = next.done === true)) return;
        yield bytesOf(next.value.json);
      }
    } finally {
      if (!done) await this.rest.return?.();
    }
  }

  /**
   * The same stream, with `check` given the whole text after its last piece: a throw cuts the response off. Tests
   * check a streamed answer against its row's schema so (VALIDATE_RESPONSES), on the path every answer takes.
   */
  checked(check: (text: string) => void): JsonStream {
    const parts = [this.first];
    const pieces = this.more();
    const rest = (async function* () {
      for await (const part of pieces) {
        parts.push(part);
        yield { json: part };
      }
      check(Buffer.concat(parts).toString('utf8'));
    })();
    return new JsonStream(this.first, rest);
  }
}

/** A backend's bytes as a Buffer over the same memory. */
const bytesOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** The request body a row accepts. */
export interface BodySpec<S extends z.ZodType> {
  schema: S;
  /**
   * A multipart/form-data body (multipart.ts): the edge reads its text fields and its one file part into the
   * object the schema parses. Absent: the body is JSON. Another content type than the row's is 415.
   */
  multipart?: MultipartSpec;
  /**
   * A body that does not match the schema is 422 (malformed, the default), or 400 where the spec calls a
   * wrong value invalid (`{ status: 400, prefix: 'invalid option' }` answers "invalid option logo: ...");
   * a body that is not a JSON object at all is always 422.
   */
  invalid?: { status: 400; prefix: string };
  /**
   * The body must give at least one of the schema's fields a value (null is none): `{}`, a body of nulls or one of
   * unknown keys only is 422 whatever `invalid` says, and nothing changes. For settings rows, where such a body
   * would otherwise write defaults the caller never chose.
   */
  namesAValue?: true;
}

/** The content type a row's body is sent as. */
export const bodyType = (spec: BodySpec<z.ZodType>) => (spec.multipart ? 'multipart/form-data' : 'application/json');

/** The success answer a row documents. */
export interface ResponseSpec<S extends z.ZodType> {
  status: 200 | 201 | 204;
  schema?: S;
  /** Content type of a body that is not JSON (signed objects). */
  contentType?: string;
  description?: string;
  /** Other answers that are not errors (302, 304), for the API document. */
  also?: { status: number; description: string }[];
  /** Headers the success answer carries (name: description), for the API document: the paging headers of lists. */
  headers?: Record<string, string>;
}

type CallerOf<A extends Auth> = A extends 'public' ? User | undefined : User;
type OrgOf<O> = O extends 'required' ? OrgRef : OrgRef | undefined;
/** What a row without params, query, body or response schema gets there. */
export type None = z.ZodUndefined;

/** A handler's context: `caller` and `org` are present whenever the row says so. */
export type RouteContext<A extends Auth, O, V> = Omit<EdgeContext, 'caller' | 'org'> & {
  caller: CallerOf<A>;
  org: OrgOf<O>;
  target: V;
};

export interface RouteSpec<
  A extends Auth,
  O extends OrgMode | undefined,
  PS extends z.ZodType,
  QS extends z.ZodType,
  BS extends z.ZodType,
  RS extends z.ZodType,
  K extends PermissionObjectType,
  V,
> {
  method: Method;
  /** Express path below /api/v1, e.g. "/orgs/:orgname". */
  path: string;
  summary: string;
  /** The resource the API reference groups the row under (api-names.ts TAGS). */
  tag: Tag;
  auth: A;
  /**
   * The Gitea token scope a token must hold to call this row (docs/authentication.md, "Token scopes"): `read:` for
   * what only reads, `write:` for what changes; Basic credentials are not limited by scopes.
   */
  scope: AccessScope;
  /** The one-use tokens that may call this row besides unrestricted ones; a one-use token elsewhere is 403. */
  uses?: TokenUseName[];
  gate?: Gate;
  /** The backend app answering; when it is down the route answers 503. */
  backend: BackendName;
  org?: O;
  params?: PS;
  query?: QS;
  body?: BodySpec<BS>;
  response: ResponseSpec<RS>;
  target?: Target<K, V, z.output<PS>>;
  /**
   * Checked before the query and body are read: those on the site first (before `org` is resolved, so a caller who
   * is not a site admin learns nothing of it), then those on the org context, then the rest in the order written.
   * The target is resolved just before the first requirement that names it (at the latest after them all), so
   * requirements written before that one are checked before it is looked up: a caller refused there is not told
   * whether it exists.
   */
  requires?: Requirement<K, { params: z.output<PS> }, RouteContext<A, O, V>>[];
  /**
   * Checked after the query and body are parsed, in the order written (before `gives`): the requirements that
   * depend on them, such as "uid is the caller".
   */
  checks?: Requirement<K, { params: z.output<PS>; query: z.output<QS>; body: z.output<BS> }, RouteContext<A, O, V>>[];
  /** Error answers besides those its declarations give (the backend's 404 and 409), for the API document and docs/routes.md. */
  errors?: ErrorSpec[];
  /** What the request gives (custom roles, or their permissions), checked after the body is parsed: see Grant. */
  gives?: GrantRequirement<{ params: z.output<PS>; query: z.output<QS>; body: z.output<BS> }, RouteContext<A, O, V>>;
  /**
   * `false` for a write that changes nothing an administrator audits (a question asked by POST, a machine's
   * usage report); every other successful write is recorded in the audit trail (audit.ts).
   */
  audit?: false;
  handle(input: { params: z.output<PS>; query: z.output<QS>; body: z.output<BS> }, ctx: RouteContext<A, O, V>): Promise<Reply<z.input<RS>>>;
}

/** A row as the edge, the API document and the route table see it. */
export interface Route {
  method: Method;
  path: string;
  summary: string;
  tag: Tag;
  auth: Auth;
  scope: AccessScope;
  uses?: TokenUseName[];
  gate?: Gate;
  backend: BackendName;
  org?: OrgMode;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: BodySpec<z.ZodType>;
  response: ResponseSpec<z.ZodType>;
  target?: Target<PermissionObjectType, unknown, any>;
  requires?: Requirement<PermissionObjectType>[];
  checks?: Requirement<PermissionObjectType>[];
  errors?: ErrorSpec[];
  gives?: GrantRequirement<{ params: any; query: any; body: any }, RouteContext<Auth, OrgMode | undefined, any>>;
  audit?: false;
  handle(input: { params: any; query: any; body: any }, ctx: RouteContext<Auth, OrgMode | undefined, unknown>): Promise<Reply<unknown>>;
}

/** What every row of a section shares. */
export interface SectionDefaults {
  tag: Tag;
  backend: BackendName;
}

/**
 * Declares the rows of one section: its tag and backend are said once, in the section's file, and
 * each row's types tie its checks to the target's object type and the handler's context to the row.
 */
export function sectionRoutes(defaults: SectionDefaults) {
  return <
    A extends Auth,
    O extends OrgMode | undefined = undefined,
    PS extends z.ZodType = None,
    QS extends z.ZodType = None,
    BS extends z.ZodType = None,
    RS extends z.ZodType = None,
    K extends PermissionObjectType = never,
    V = undefined,
  >(
    spec: Omit<RouteSpec<A, O, PS, QS, BS, RS, K, V>, keyof SectionDefaults> & Partial<SectionDefaults>,
  ): Route => ({ ...defaults, ...spec }) as unknown as Route;
}
