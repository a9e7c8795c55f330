import { z } from 'zod';
import { PLATFORM_VERSION } from '@platform/service-kit';
import { operationIdOf, TAG_LIST } from './api-names';
import type { PermissionObjectType } from '@platform/proto';
import { bodyType, type Requirement, type Route } from './route';

/** Where the API document is served; every error body points here. */
export const API_DOCUMENT_PATH = '/api/v1/openapi.json';
/** Where the browsable API reference is served (api-reference.ts; Swagger UI under `swagger/`). */
export const API_DOCS_PATH = '/api/v1/docs';

/** The error body every failure answers: `message`, the document's `url`, and `errors` per field. */
const ErrorBody = z
  .object({
    message: z.string(),
    url: z.string().meta({ format: 'uri' }),
    errors: z.array(z.object({ field: z.string(), description: z.string() })).optional(),
  })
  .meta({ id: 'Error' });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid path parameter, query or value',
  401: 'no valid credentials',
  403: "a requirement of the route does not hold, the caller cannot act for the `org` organization, the token's scopes do not cover the route, or the account is prohibited from logging in",
  404: 'the organization, team, role or object does not exist or is not visible to the caller',
  409: 'conflicts with the current state',
  413: 'the body or a message is too large',
  415: 'the body has a content type the route does not accept',
  422: 'the body is malformed or does not match the schema',
  429: 'too many failed sign-in attempts (HTTP Basic credentials, which every route takes); see Retry-After',
  503: 'the backend answering the route is unavailable',
  504: 'the backend did not answer in time',
};

/** The error statuses a row can answer, from what it declares. */
function errorStatuses(r: Route): number[] {
  const out = new Set<number>([503, 504]);
  if (r.params || r.query || r.org || r.body?.invalid) out.add(400);
  if (r.auth !== 'public' || r.org) out.add(401);
  // Every route may be refused to a caller: a token without the route's scope, an account prohibited from logging in.
  out.add(403);
  if (r.checks?.some((q) => 'check' in q && q.status === 401)) out.add(401);
  for (const e of r.errors ?? []) out.add(e.status);
  if (r.target || r.org) out.add(404);
  if (r.body) for (const s of [413, 415, 422]) out.add(s);
  // HTTP Basic credentials are taken on every route, and counted against the per-address and per-account limits.
  out.add(429);
  if (['post', 'put', 'patch'].includes(r.method)) out.add(409);
  return [...out].sort((a, b) => a - b);
}

/** JSON Schemas with their named parts (`.meta({ id })`) hoisted into components.schemas. */
class Schemas {
  readonly components: Record<string, object> = {};

  of(schema: z.ZodType, io: 'input' | 'output'): object {
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, any>;
    const defs = (json.$defs ?? {}) as Record<string, object>;
    delete json.$defs;
    delete json.$schema;
    // Request bodies parse what responses print: the same named schema may read differently on input.
    const rename = (id: string) => (io === 'input' && this.components[id] && !same(this.components[id], defs[id]) ? `${id}Input` : id);
    const names = Object.fromEntries(Object.keys(defs).map((id) => [id, rename(id)]));
    const rewrite = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(rewrite)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v).map(([k, x]) => [
                k,
                k === '$ref' && typeof x === 'string' ? `#/components/schemas/${names[x.replace('#/$defs/', '')]}` : rewrite(x),
              ]),
            )
          : v;
    for (const [id, def] of Object.entries(defs)) this.components[names[id]] = rewrite(def) as object;
    return rewrite(json) as object;
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The properties of an object schema as OpenAPI parameters. */
function parameters(schemas: Schemas, schema: z.ZodType | undefined, where: 'path' | 'query'): object[] {
  if (!schema) return [];
  const json = schemas.of(schema, 'input') as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

/** Where a requirement on the `org` context is checked, by the row's `org` mode. */
function orgPlace(r: Route): string {
  return r.org === 'required'
    ? 'the `org` organization'
    : r.org === 'account'
      ? 'the `org` organization, when `org` names one'
      : 'the `org` organization, when given';
}

/**
 * One requirement as the API document (`code` leaves names as they are) and docs/routes.md (`code` quotes them)
 * say it: "edit:org on the `org` organization", "the view relation on hub ...", a check's own words, "either ... or ...".
 */
export function describeRequirement(q: Requirement<PermissionObjectType>, r: Route, code: (name: string) => string = (n) => n): string {
  if ('anyOf' in q) return `either ${q.anyOf.map((a) => describeRequirement(a, r, code)).join(', or ')}`;
  if ('check' in q) return q.status === 401 ? `${q.check} (401 otherwise)` : q.check;
  const what = q.permission !== undefined ? code(q.permission) : `the ${code(q.relation)} relation`;
  const on = q.on === 'target' ? r.target!.describe : q.on === 'org' ? orgPlace(r) : q.on === 'site' ? 'the site' : q.on.describe;
  return `${what} on ${on}`;
}

/** The row's requirements in the order the edge checks them: site, `org`, the rest as written, then the checks. */
export function requirementsOf(r: Route, code?: (name: string) => string): string[] {
  const requires = r.requires ?? [];
  const at = (where: string) => requires.filter((q) => 'on' in q && q.on === where);
  const rest = requires.filter((q) => !('on' in q && (q.on === 'site' || q.on === 'org')));
  return [...at('site'), ...at('org'), ...rest, ...(r.checks ?? [])].map((q) => describeRequirement(q, r, code));
}

/** The row's documented error answers of one status, joined. */
const errorsOf = (r: Route, status: number) =>
  (r.errors ?? [])
    .filter((e) => e.status === status)
    .map((e) => e.description)
    .join('; ');

/** Who may call: HTTP Basic credentials wherever a token is taken, as Gitea takes them (docs/authentication.md). */
const SECURITY = {
  public: [{}, { token: [] }, { tokenQuery: [] }, { basic: [] }],
  token: [{ token: [] }, { tokenQuery: [] }, { basic: [] }],
  basic: [{ basic: [] }],
} as const;

/** OpenAPI 3.1 document of the routes registered on this deployment, from the same schemas that validate. */
export function apiDocument(routes: Route[]): object {
  const schemas = new Schemas();
  const errorRef = { $ref: `#/components/schemas/${ErrorBody.meta()!.id}` };
  schemas.of(ErrorBody, 'output');
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const p = r.path.replace(/[:*]([A-Za-z_]+)/g, '{$1}');
    const org = r.org
      ? [
          {
            name: 'org',
            in: 'query',
            required: r.org === 'required',
            schema: { type: 'string' },
            description:
              (r.org === 'account'
                ? 'the owner account: an organization, or a user account; default the caller'
                : 'the organization context') +
              '. 403 when the caller cannot act for it (no such organization, or a private one it is not a member of: the same answer); 404 when unknown to a site admin',
          },
        ]
      : [];
    const success = r.response.schema
      ? {
          description: r.response.description ?? 'success',
          content: { [r.response.contentType ?? 'application/json']: { schema: schemas.of(r.response.schema, 'output') } },
        }
      : { description: r.response.description ?? 'success' };
    const headers = Object.entries(r.response.headers ?? {}).map(([name, description]) => [
      name,
      { description, schema: { type: 'string' } },
    ]);
    const responses: Record<string, object> = {
      [r.response.status]: headers.length ? { ...success, headers: Object.fromEntries(headers) } : success,
    };
    for (const a of r.response.also ?? []) responses[a.status] = { description: a.description };
    for (const s of errorStatuses(r)) {
      const description = [ERROR_DESCRIPTIONS[s], errorsOf(r, s)].filter(Boolean).join('; ');
      responses[s] = { description, content: { 'application/json': { schema: errorRef } } };
    }
    paths[p] ??= {};
    paths[p][r.method] = {
      operationId: operationIdOf(r),
      summary: r.summary,
      tags: [r.tag],
      security: SECURITY[r.auth],
      // The Gitea token scope the row needs (docs/authentication.md, "Token scopes"), as a vendor extension.
      ...(r.auth !== 'basic' && { 'x-token-scope': r.scope }),
      parameters: [...parameters(schemas, r.params, 'path'), ...parameters(schemas, r.query, 'query'), ...org],
      ...(r.body && {
        requestBody: {
          required: true,
          content: { [bodyType(r.body)]: { schema: schemas.of(r.body.schema, 'input') } },
        },
      }),
      responses,
      'x-backend': r.backend,
      ...(r.gate && { 'x-gate': r.gate }),
      ...(r.requires?.length && { 'x-requires': requirementsOf({ ...r, checks: undefined }) }),
      ...(r.checks?.length && { 'x-checks': requirementsOf({ ...r, requires: undefined }) }),
      ...(r.gives && { 'x-gives': r.gives.describe }),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Platform administration API',
      version: PLATFORM_VERSION,
      description:
        'Every error answers `{message, url, errors?}`. Requirements of each operation are listed in `x-requires` (checked before the query and body are read) and `x-checks` (after); `x-gives` names what a request gives, every permission of which the caller must hold.',
    },
    servers: [{ url: '/api/v1' }],
    tags: TAG_LIST.filter((t) => routes.some((r) => r.tag === t.name)),
    components: {
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`token <personal access token>`' },
        tokenQuery: { type: 'apiKey', in: 'query', name: 'token' },
        basic: {
          type: 'http',
          scheme: 'basic',
          description:
            'login (or email) and password; with a second factor, its code in `X-Gitea-OTP`. Taken on every route, counted per client address and per account',
        },
      },
      schemas: schemas.components,
    },
    paths,
  };
}
