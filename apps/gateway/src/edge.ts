import type { z } from 'zod';
import {
  DomainError,
  InputError,
  InternalError,
  MAX_VIOLATIONS,
  NotAllowedError,
  NotAuthenticatedError,
  ValidationError,
  type FieldViolation,
} from '@platform/errors';
import { scopesCover, type Logger } from '@platform/service-kit';
import { auditEventOf, recordChange } from './audit';
import { assertPasswordChanged } from './sections/identity/must-change-password';
import { authenticate, resolveOrg, type Authenticated } from './authentication';
import { bindBackends, type Backends } from './backends';
import type { GatewayConfig } from './config';
import { readMultipart } from './multipart';
import type { PermissionObjectType } from '@platform/proto';
import {
  bodyType,
  JsonStream,
  JsonText,
  type AuthzObject,
  type Denied,
  type EdgeContext,
  type Grant,
  type Requirement,
  type Route,
} from './route';
import type { SignInFailures } from './sign-in-failures';
import { assertBoundedInput, assertNoNul } from './validation';
import type { ApiRequest, Outgoing } from './api-request';
import { sendBody } from './replies';

/** What the edge needs besides the row. */
export interface EdgeDeps {
  backends: Backends;
  config: GatewayConfig;
  log: Logger;
  /** Failed Basic-auth attempts per client address (sign-in-failures.ts). */
  addressFailures: SignInFailures;
  /** Forgets the kept tokens of accounts (all without ids) at once (orgs-teams' read model); absent: none are kept. */
  forgetTokens?: (accountIds?: number[]) => void;
}

/** What answers one row: everything the row declares happens here, then the handler runs and its reply is sent. */
export function serveRoute(route: Route, deps: EdgeDeps) {
  return async (req: ApiRequest): Promise<void> => {
    req.res.locals.route = route.path;
    let reply = await serve(route, req, deps);
    if (deps.config.VALIDATE_RESPONSES) {
      const { body } = reply;
      if (body instanceof JsonStream)
        reply = { ...reply, body: body.checked((text) => assertDocumented(route, { ...reply, body: new JsonText(Buffer.from(text)) })) };
      else assertDocumented(route, reply);
    }
    const res = req.res;
    res.statusCode = reply.status ?? route.response.status;
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body instanceof JsonStream) await writeStream(res, reply.body, deps.log);
    else sendBody(res, reply.body);
  };
}

/**
 * A streamed body, piece by piece at the client's pace (the next piece is asked of the backend only once the
 * socket has room). A client that goes away stops the backend's stream; a backend that fails in the middle cuts
 * the response off, so the client sees an incomplete body rather than a complete-looking wrong one.
 */
async function writeStream(res: Outgoing, body: JsonStream, log: Logger): Promise<void> {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const pieces = body.more();
  const room = roomOf(res);
  try {
    if (!res.write(body.first)) await room();
    for await (const piece of pieces) {
      if (res.destroyed) return;
      if (!res.write(piece)) await room();
    }
    res.end();
  } catch (err) {
    log.warn({ err, route: res.locals.route }, 'a streamed response was cut off');
    res.destroy();
  } finally {
    await pieces.return(undefined);
  }
}

/**
 * A wait for the response to have room again, or to be gone. A streamed view waits once a piece, so the response
 * gets one drain and one close listener for its whole life, not one a wait: compression hands drain listeners to its
 * own stream, where neither `off` nor a `once` listener's removal on the response reaches them, so listeners
 * added a wait would pile up there (and each drain would call them all).
 */
function roomOf(res: Outgoing): () => Promise<void> {
  let wake: (() => void) | undefined;
  const woken = () => {
    wake?.();
    wake = undefined;
  };
  res.on('drain', woken);
  res.once('close', woken);
  return () => (res.destroyed ? Promise.resolve() : new Promise((resolve) => (wake = resolve)));
}

/**
 * One request through a row: bounded input, authentication, the requirements on the site, the `org` context,
 * the path, the requirements on the org context, the other requirements in the order written (the target resolved
 * before the first that names it), the query, the body, the checks, what the request gives, the handler. Statuses:
 * 400 bad path or query, 401, 403 (also an `org` the caller cannot act for), 404 (target, or an unknown `org` for a
 * site admin), 415, 422 or 400 (body).
 */
async function serve(route: Route, req: ApiRequest, deps: EdgeDeps) {
  assertNoNul(req);
  assertBoundedInput(req);
  const { config } = deps;
  const arrivedAt = performance.now();
  const backends = bindBackends(deps.backends, req.requestId, Date.now() + config.BACKEND_DEADLINE_MS, arrivedAt);
  const forgetTokens = (userIds?: number[]) => deps.forgetTokens?.(userIds);
  const ctx: EdgeContext = {
    // One set of bound clients behind both doors: which reads are kept is their owners' to say (backends.ts).
    backends,
    kept: backends,
    config,
    requestId: req.requestId,
    arrivedAt,
    req,
    caller: undefined,
    org: undefined,
    scope: undefined,
    forgetTokens,
  };
  const authenticated = await authenticate(route.auth, req, backends, deps.addressFailures);
  ctx.caller = authenticated?.user;
  ctx.scope = authenticated?.scope;
  // For the access line (http.ts): who made the request.
  if (ctx.caller) req.res.locals.user = ctx.caller.login;
  assertTokenMayCall(route, authenticated);
  assertPasswordChanged(route, ctx.caller);
  const requires = route.requires ?? [];
  const site = requires.filter((r) => isOn(r, 'site'));
  const org = requires.filter((r) => isOn(r, 'org'));
  const rest = requires.filter((r) => !isOn(r, 'site') && !isOn(r, 'org'));
  // A site requirement depends on nothing the request names: a caller who is not a site admin is refused before
  // `org` is looked at, so whatever it names (an unknown, private or absent organization) the answer is 403.
  for (const r of site) await enforce(r, { params: undefined }, { ...ctx, target: undefined }, route);
  if (route.org) ctx.org = await resolveOrg(route.org, req, backends, ctx.caller);
  const params = parseParts(route.params, req.params, 'path');

  // What requirements and handlers see: the target is filled in once resolved.
  const routeCtx: EdgeContext & { target: unknown } = { ...ctx, target: undefined };
  for (const r of org) await enforce(r, { params }, routeCtx, route);
  let resolved = !route.target;
  const resolveTarget = async () => {
    if (resolved) return;
    routeCtx.target = await route.target!.resolve(params, routeCtx);
    resolved = true;
  };
  for (const r of rest) {
    if (namesTarget(r)) await resolveTarget();
    await enforce(r, { params }, routeCtx, route);
  }
  await resolveTarget();

  // What the caller may not do is said before what is wrong with the request's query and body, but for the
  // checks that depend on them.
  const query = parseParts(route.query, req.query, 'query');
  const body = route.body ? await parseBody(route, req, config) : undefined;
  const input = { params, query, body };
  for (const r of route.checks ?? []) await enforce(r, input, routeCtx, route);
  // Made before the handler, so that a write can record it with its change (AuditWith).
  routeCtx.audit = auditEventOf(route, req, ctx);
  const handlerCtx = routeCtx as never;
  // What a request gives depends on its body, so this requirement comes last.
  if (route.gives) await checkGrant(ctx, route.gives.of(input, handlerCtx));
  const reply = await route.handle(input, handlerCtx);
  recordChange(routeCtx.audit, reply.status ?? route.response.status, deps);
  return reply;
}

type AnyRequirement = Requirement<PermissionObjectType>;

const isOn = (r: AnyRequirement, where: 'site' | 'org' | 'target') => 'on' in r && r.on === where;

/** Whether a requirement is on the target, or has an alternative that is. */
const namesTarget = (r: AnyRequirement): boolean => ('anyOf' in r ? r.anyOf.some(namesTarget) : isOn(r, 'target'));

/** Passes when the requirement holds, else throws its refusal. */
async function enforce(r: AnyRequirement, input: unknown, ctx: EdgeContext & { target: unknown }, route: Route): Promise<void> {
  const refusal = await refusalOf(r, input, ctx, route);
  if (refusal) throw refusal;
}

const say = async (denied: Denied<unknown, unknown>, input: unknown, ctx: unknown) =>
  typeof denied === 'string' ? denied : denied(input, ctx);

/**
 * undefined when the requirement holds, else the error refusing the request (403; 401 for a check that says so).
 * Errors of resolving an object (404 for what the request names) are thrown as they are.
 */
async function refusalOf(
  r: AnyRequirement,
  input: unknown,
  ctx: EdgeContext & { target: unknown },
  route: Route,
): Promise<Error | undefined> {
  if ('anyOf' in r) {
    let last: Error | undefined;
    for (const alternative of r.anyOf) {
      last = await refusalOf(alternative, input, ctx, route);
      if (!last) return undefined;
    }
    return r.denied === undefined ? last : new NotAllowedError(await say(r.denied, input, ctx));
  }
  if ('check' in r) {
    if (await r.holds(input, ctx)) return undefined;
    const message = await say(r.denied, input, ctx);
    return r.status === 401 ? new NotAuthenticatedError(message) : new NotAllowedError(message);
  }
  const name = r.permission ?? `the ${r.relation} relation`;
  if (!ctx.caller) return new NotAllowedError(`${name} requires a signed-in user`);
  // With an optional `org` left out the request acts on the caller's own account: nothing to check there;
  // a user account named in the `account` mode has no organization relations (the row's site checks decide).
  if (r.on === 'org' && (!ctx.org || ctx.org.type === 'user')) return undefined;
  const { authz } = ctx.kept.authz;
  let object: AuthzObject | undefined;
  if (r.on === 'site') object = { type: 'site', id: 0 };
  else if (r.on === 'org') object = { type: 'organization', id: ctx.org!.id };
  else if (r.on === 'target') {
    const target = route.target!;
    const byRelation = r.permission === undefined && target.authzId;
    object = { type: target.type, id: byRelation ? target.authzId!(ctx.target) : target.id(ctx.target) };
  } else object = await r.on.resolve(input, ctx);
  let allowed = false;
  if (object && r.permission !== undefined) {
    ({ allowed } = await authz.checkPermission({ userId: ctx.caller.id, permission: r.permission, objectId: Number(object.id) }));
  } else if (object && 'relation' in r) {
    ({ allowed } = await authz.check({
      tuple: { user: `user:${ctx.caller.id}`, relation: r.relation, object: `${object.type}:${object.id}` },
      contextualTuples: object.contextualTuples ?? [],
    }));
  }
  if (allowed) return undefined;
  if (r.denied !== undefined) return new NotAllowedError(await say(r.denied, input, ctx));
  return new NotAllowedError(r.permission !== undefined ? `you do not have the ${r.permission} permission` : `you do not have ${name}`);
}

/** What a one-use token is told on a row that does not list its use. */
const USE_REFUSALS: Record<string, string> = { 'license-proxy': 'this token may only be used by a license proxy' };

/**
 * 403 for a token on a row it may not call (docs/authentication.md), public rows included: a one-use token on a row
 * that does not list its use, and a token whose Gitea scopes do not cover the row's scope, named in the answer as
 * Gitea names it. Basic credentials are limited by neither.
 */
export function assertTokenMayCall(
  route: Pick<Route, 'uses' | 'scope'>,
  token: Pick<Authenticated, 'scope' | 'accessScopes'> | undefined,
): void {
  if (!token?.accessScopes) return;
  const use = token.scope;
  if (use && !(route.uses ?? []).some((u) => u === use.name))
    throw new NotAllowedError(USE_REFUSALS[use.name] ?? `this token may only be used for ${use.name}`);
  if (!scopesCover(token.accessScopes, route.scope))
    throw new NotAllowedError(
      `token does not have at least one of required scope(s): [${route.scope}] (token scopes: ${token.accessScopes.join(', ')})`,
    );
}

/** The answer is what the API document says it is: a JSON body matches the row's response schema. */
function assertDocumented(route: Route, reply: { status?: number; body?: unknown }): void {
  if (reply.body instanceof JsonText) reply = { ...reply, body: JSON.parse(reply.body.bytes.toString('utf8')) };
  const schema = route.response.schema;
  if (reply.body === undefined || Buffer.isBuffer(reply.body) || (reply.status ?? route.response.status) !== route.response.status) return;
  if (!schema) throw new InternalError(`${route.method.toUpperCase()} ${route.path} answered a body its row does not document`);
  const parsed = schema.safeParse(reply.body);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new InternalError(`${route.method.toUpperCase()} ${route.path} answered a body that does not match its schema (${where})`);
  }
}

/** 403 naming what the caller lacks when the request gives permissions they do not hold (route.ts, Grant). */
async function checkGrant(ctx: EdgeContext, grant: Grant | undefined): Promise<void> {
  if (!grant || !(grant.permissions?.length || grant.roleIds?.length || grant.teamIds?.length)) return;
  if (!ctx.caller) throw new NotAllowedError(`${grant.what} requires a signed-in user`);
  const { missing } = await ctx.kept.authz.roles.checkGrant({
    userId: ctx.caller.id,
    orgId: grant.orgId,
    permissions: grant.permissions ?? [],
    roleIds: grant.roleIds ?? [],
    teamIds: grant.teamIds ?? [],
  });
  if (missing.length) throw new NotAllowedError(`${grant.what} would give permissions you do not hold: ${missing.join(', ')}`);
}

/** Path parameters or query values by the row's schema; a mismatch is 400 naming the parameter. */
function parseParts(schema: z.ZodType | undefined, raw: unknown, where: 'path' | 'query'): any {
  if (!schema) return undefined;
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const violations = violationsOf(parsed.error, []);
  const first = parsed.error.issues[0];
  const name = first.path.map(String).join('.') || where;
  throw new InputError(`${name} ${first.message}`, violations);
}

/** Whether the request carries a body at all (a length, or a chunked transfer). */
const hasBody = (req: ApiRequest) => Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;

/**
 * The body by the row's schema. A body of another content type than the row accepts is 415 (text sent
 * where JSON is read would otherwise count as no body at all); a body that is not a JSON object where one
 * is expected, or does not match, is 422 — 400 for rows whose spec calls a wrong value invalid.
 */
async function parseBody(route: Route, req: ApiRequest, config: GatewayConfig): Promise<unknown> {
  const spec = route.body!;
  const type = bodyType(spec);
  if (hasBody(req) && !req.is(type)) {
    throw new DomainError('validation', `the body must be ${type}`, { httpStatus: 415, headers: { Accept: type } });
  }
  const raw = spec.multipart ? await readMultipart(req, spec.multipart, config) : (req.body ?? {});
  // A form's text fields are read only now, so the NUL check of the path, query and JSON body is made again on
  // them (the file part's bytes are the document's own business).
  if (spec.multipart) assertNoNul({ params: {}, query: {}, body: { ...(raw as object), [spec.multipart.file]: undefined } });
  if (type === 'application/json' && (typeof raw !== 'object' || raw === null || Array.isArray(raw)) && !isArraySchema(spec.schema)) {
    throw new ValidationError('the body must be a JSON object');
  }
  if (spec.namesAValue) assertNamesAValue(spec.schema, raw);
  const parsed = spec.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  if (spec.invalid) {
    const violations = violationsOf(parsed.error, []);
    throw new InputError(`${spec.invalid.prefix} ${violations[0].field}: ${violations[0].description}`, violations);
  }
  const violations = violationsOf(parsed.error, ['body']);
  const more = parsed.error.issues.length > violations.length ? `; and ${parsed.error.issues.length - violations.length} more` : '';
  throw new ValidationError(violations.map((v) => `${v.field}: ${v.description}`).join('; ') + more, violations);
}

/** A settings body that gives none of the row's fields a value is malformed (BodySpec.namesAValue). */
function assertNamesAValue(schema: z.ZodType, raw: unknown): void {
  const fields = Object.keys((schema as { shape?: Record<string, unknown> }).shape ?? {});
  const given = raw as Record<string, unknown>;
  if (fields.some((f) => Object.hasOwn(given, f) && given[f] !== null && given[f] !== undefined)) return;
  const description = `give a value to at least one of ${fields.join(', ')}`;
  throw new ValidationError(`body: ${description}`, [{ field: 'body', description }]);
}

const isArraySchema = (schema: z.ZodType) => (schema as { def?: { type?: string } }).def?.type === 'array';

/** Zod issues as field violations (at most MAX_VIOLATIONS); zod's messages name the expectation, never the value. */
function violationsOf(error: z.ZodError, prefix: string[]): FieldViolation[] {
  return error.issues
    .slice(0, MAX_VIOLATIONS)
    .map((i) => ({ field: [...prefix, ...i.path.map(String)].join('.') || prefix.join('.'), description: i.message }));
}
