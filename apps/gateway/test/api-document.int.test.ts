import { startTestGateway } from './test-gateway';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { orgsTeamsV1 } from '@platform/proto';
import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from '../src/config';
import { GITEA_ZERO_TIME, giteaTime } from '../src/gitea';
import { userJson } from '../src/sections/identity/presenters';
import { tokenJson } from '../src/sections/service-accounts/presenters';
import { OPERATION_IDS, operationKey, TAGS } from '../src/api-names';
import { registeredRoutes } from '../src/http';
import { REGENERATE_ROUTES_COMMAND, renderRoutesDoc, routesDocPath } from '../src/routes-doc';
import { ROUTES } from '../src/sections';

// The API document is generated from the route rows: it must be valid OpenAPI 3.1, cover every route with
// its schemas, and be browsable; docs/routes.md must be what the rows say.

type Operation = {
  operationId: string;
  tags: string[];
  parameters: { name: string; in: string; schema: object }[];
  requestBody?: { content: Record<string, { schema: object }> };
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
  security: object[];
};

/** RFC 3339's date-time (full-date "T" full-time), what a Gitea client (Go's time.RFC3339) parses. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
};

/**
 * What of `value` the document's `schema` refuses, as a client generated from the document reads it: the types (null
 * only where the schema allows it), the date-times, the required fields, the fields and items given.
 */
function refusals(schema: JsonSchema, value: unknown, schemas: Record<string, JsonSchema>, at = '$'): string[] {
  if (schema.$ref) return refusals(schemas[schema.$ref.split('/').pop()!], value, schemas, at);
  if (schema.anyOf)
    return schema.anyOf.some((alt) => refusals(alt, value, schemas, at).length === 0) ? [] : [`${at}: matches no alternative`];
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  const types = schema.type === undefined ? undefined : [schema.type].flat();
  if (types && !types.includes(kind) && !(kind === 'integer' && types.includes('number')))
    return [`${at}: ${kind} where ${types.join('|')}`];
  if (schema.format === 'date-time' && !(typeof value === 'string' && RFC3339.test(value))) return [`${at}: not an RFC 3339 date-time`];
  if (kind === 'array')
    return (value as unknown[]).flatMap((v, i) => (schema.items ? refusals(schema.items, v, schemas, `${at}[${i}]`) : []));
  if (kind !== 'object') return [];
  const given = value as Record<string, unknown>;
  return [
    ...(schema.required ?? []).filter((k) => !(k in given)).map((k) => `${at}.${k}: missing`),
    ...Object.entries(given).flatMap(([k, v]) => (schema.properties?.[k] ? refusals(schema.properties[k], v, schemas, `${at}.${k}`) : [])),
  ];
}

describe('the API document and the route table', () => {
  let base: string;
  let close: () => void;
  let doc: { paths: Record<string, Record<string, Operation>>; tags: { name: string; description: string }[] };
  // Every gate open, so every row is in the document.
  const GATES_OPEN = { DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev', BILLING_ENABLED: 'true' };
  const config = loadConfig(gatewayEnv, GATES_OPEN);

  beforeAll(async () => {
    ({ base, close } = await startTestGateway(GATES_OPEN));
    doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as typeof doc;
  });
  afterAll(() => close?.());

  it('is a valid OpenAPI 3.1 document', async () => {
    const out = execFileSync(process.execPath, [path.join(__dirname, 'validate-openapi.mjs')], { input: JSON.stringify(doc) });
    expect(JSON.parse(out.toString())).toEqual({ valid: true });
  });

  it('has an operation for every served route, with its parameters, body, success schema, errors and security', () => {
    const problems: string[] = [];
    for (const r of registeredRoutes(ROUTES, config)) {
      const key = `${r.method.toUpperCase()} ${r.path}`;
      const op = doc.paths[r.path.replace(/[:*]([A-Za-z_]+)/g, '{$1}')]?.[r.method];
      if (!op) {
        problems.push(`${key}: no operation`);
        continue;
      }
      for (const name of [...r.path.matchAll(/[:*]([A-Za-z_]+)/g)].map((m) => m[1]))
        if (!op.parameters.some((p) => p.in === 'path' && p.name === name)) problems.push(`${key}: path parameter ${name} undeclared`);
      if (r.org && !op.parameters.some((p) => p.in === 'query' && p.name === 'org')) problems.push(`${key}: org undeclared`);
      if (r.body && !Object.values(op.requestBody?.content ?? {})[0]?.schema) problems.push(`${key}: no request body schema`);
      const success = op.responses[String(r.response.status)];
      if (!success) problems.push(`${key}: no ${r.response.status} response`);
      else if (r.response.schema && !Object.values(success.content ?? {})[0]?.schema) problems.push(`${key}: no response schema`);
      const errors = Object.entries(op.responses).filter(([s]) => Number(s) >= 400);
      if (errors.length === 0) problems.push(`${key}: no error responses`);
      for (const [s, e] of errors) if (!e.content?.['application/json']?.schema) problems.push(`${key}: ${s} without the error schema`);
      if (!op.security?.length) problems.push(`${key}: no security`);
    }
    expect(problems).toEqual([]);
  });

  it('describes bodies and answers with the schemas that validate them', () => {
    const create = doc.paths['/orgs'].post;
    const body = create.requestBody!.content['application/json'].schema as { properties: Record<string, object>; required: string[] };
    expect(body.required).toEqual(['username']);
    expect(body.properties.username).toMatchObject({ type: 'string', minLength: 1, maxLength: 40 });
    expect(create.responses['201'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/Organization' });
    const join = doc.paths['/orgs/{orgname}/teams/{teamid}/action/join'].post;
    expect(join.parameters.find((p) => p.name === 'uid')).toMatchObject({ in: 'query', schema: { type: 'integer' } });
    expect((join as unknown as { 'x-requires': string[] })['x-requires']).toEqual(['join:team on team `{teamid}`']);
  });

  it("takes no contextual tuple or condition context from a caller: the questions the API asks authz are the platform's own", () => {
    // A door that took them would let a caller add relationships to its own question (docs/grpc.md, "What a question
    // adds"); such a door must hold each object and userset named to what the caller sees, as the gRPC methods do.
    const schemas = (doc as unknown as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
    const named: string[] = [];
    const seen = new Set<unknown>();
    const walk = (where: string, node: unknown): void => {
      if (!node || typeof node !== 'object' || seen.has(node)) return;
      seen.add(node);
      const ref = (node as { $ref?: string }).$ref;
      if (ref) return walk(where, schemas[ref.split('/').pop()!]);
      for (const [key, value] of Object.entries(node)) {
        if (key === 'properties' && value && typeof value === 'object')
          for (const name of Object.keys(value)) if (/contextual|^context|condition/i.test(name)) named.push(`${where}: ${name}`);
        walk(where, value);
      }
    };
    for (const [p, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        const key = `${method.toUpperCase()} ${p}`;
        for (const param of op.parameters ?? []) if (/contextual|^context|condition/i.test(param.name)) named.push(`${key}: ${param.name}`);
        seen.clear();
        walk(key, op.requestBody);
      }
    expect(named).toEqual([]);
  });

  it('serves a browsable reference of the document as one page without a script: every operation, every schema', async () => {
    const page = await fetch(`${base}/api/v1/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    // No site may frame the page, and it runs no script at all: its policy allows none, and its one style by hash.
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toContain('script-src');
    expect(policy).toMatch(/style-src 'sha256-[^']+'$/);
    expect(html).not.toContain('<script');
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    for (const op of Object.values(doc.paths).flatMap((ops) => Object.values(ops))) expect(html).toContain(`id="${op.operationId}"`);
    expect(html.match(/<div class="schema"/g)).toHaveLength(Object.keys(doc.components.schemas).length);
    // An operation says who may call it, as the document's extensions say.
    expect(html).toContain('Requires: view_contracts:site_admin on the site');
    expect((await fetch(`${base}/api/v1/docs`, { redirect: 'manual' })).headers.get('location')).toBe('/api/v1/docs/');
  });

  it('keeps Swagger UI under the reference, for trying calls, from bundled assets', async () => {
    const page = await fetch(`${base}/api/v1/docs/swagger/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    // It runs only scripts served beside it: none inline, so the policy allows none.
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self';");
    expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    expect([...html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>/g)]).toEqual([]);
    const start = await fetch(`${base}/api/v1/docs/swagger/platform-reference.js`);
    expect(start.headers.get('content-type')).toMatch(/javascript/);
    expect(await start.text()).toContain('"/api/v1/openapi.json"');
    for (const asset of html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)) {
      const res = await fetch(`${base}/api/v1/docs/swagger/${asset[1]}`);
      expect([asset[1], res.status, res.headers.get('x-frame-options')]).toEqual([asset[1], 200, 'DENY']);
    }
    expect((await fetch(`${base}/api/v1/docs/swagger`, { redirect: 'manual' })).headers.get('location')).toBe('/api/v1/docs/swagger/');
  });

  it('names every row once in the operationId table, with unique ids', () => {
    const keys = ROUTES.map(operationKey);
    expect(keys.filter((k) => !(k in OPERATION_IDS))).toEqual([]);
    expect(Object.keys(OPERATION_IDS).filter((k) => !keys.includes(k))).toEqual([]);
    const ids = Object.values(OPERATION_IDS);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
    // Gitea's own ids where the route is Gitea's.
    expect(OPERATION_IDS).toMatchObject({
      'POST /orgs': 'orgCreate',
      'GET /orgs/:orgname/teams': 'orgListTeams',
      'GET /teams/:teamid': 'orgGetTeam',
      'POST /users/:username/tokens': 'userCreateToken',
      'GET /orgs/:orgname/members': 'orgListMembers',
    });
  });

  it('gives every operation its id and one resource tag, each tag described once in the tags list', () => {
    const ops = Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod));
    const ids = ops.map((op) => op.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(new Set(ids)).toEqual(new Set(registeredRoutes(ROUTES, config).map((r) => OPERATION_IDS[operationKey(r)])));
    const names = doc.tags.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const t of doc.tags) expect([t.name, t.description]).toEqual([t.name, TAGS[t.name as keyof typeof TAGS]]);
    for (const op of ops) {
      expect(op.tags).toHaveLength(1);
      expect(names).toContain(op.tags[0]);
    }
    // What a reader sees names resources, not sections of a specification or issue numbers.
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/\bspec(ification)?\s+(section\s+)?\d|\bsection\s+\d+\.\d|\bissue\s+#?\d|\(\d+\.\d+\)/i);
  });

  it('types every date-time of users and tokens as a string, never null, and accepts what they answer, Gitea’s zero time for never', () => {
    const schemas = (doc as unknown as { components: { schemas: Record<string, JsonSchema> } }).components.schemas;
    const dateTimes: string[] = [];
    for (const name of ['User', 'AccessToken', 'ServiceAccount', 'ServiceAccountToken', 'CreatedServiceAccountToken']) {
      for (const [field, schema] of Object.entries(schemas[name].properties ?? {})) {
        if (!JSON.stringify(schema).includes('date-time') && !/^(created|last_login|.+_at|.+_until)$/.test(field)) continue;
        dateTimes.push(`${name}.${field}`);
        // A Gitea client (Go's time.Time) reads a string in RFC 3339; null would be no time at all.
        expect([name, field, schema]).toEqual([name, field, expect.objectContaining({ type: 'string', format: 'date-time' })]);
      }
    }
    expect(dateTimes).toEqual(
      expect.arrayContaining(['User.last_login', 'User.created', 'AccessToken.created_at', 'AccessToken.last_used_at']),
    );

    const never = userJson(
      orgsTeamsV1.User.fromPartial({ id: 7, login: 'new', active: true, createdUnix: 1_767_225_600, lastLoginUnix: 0 }),
    );
    expect(never).toMatchObject({ last_login: GITEA_ZERO_TIME, created: '2026-01-01T00:00:00Z' });
    const signedIn = userJson(
      orgsTeamsV1.User.fromPartial({
        id: 8,
        login: 'old',
        active: true,
        createdUnix: 1_767_225_600,
        lastLoginUnix: 1_767_312_000,
        signInLockedUntilUnix: 1_767_313_000,
      }),
    );
    const token = {
      id: 3,
      name: 'ci',
      sha1: '',
      token_last_eight: '12345678',
      scopes: ['all'],
      created_at: giteaTime(1_767_225_600),
      last_used_at: giteaTime(0),
    };
    const accountToken = tokenJson(
      orgsTeamsV1.TokenInfo.fromPartial({ id: 4, name: 'ci', tokenLastEight: '12345678', createdUnix: 1_767_225_600, lastUsedUnix: 0 }),
    );
    const answers: [string, unknown][] = [
      ['User', never],
      ['User', signedIn],
      ['AccessToken', token],
      ['ServiceAccountToken', accountToken],
    ];
    expect(answers.flatMap(([name, value]) => refusals(schemas[name], value, schemas, name))).toEqual([]);
    // And the old answer, null for never, is what the document refuses.
    expect(refusals(schemas.User, { ...never, last_login: null }, schemas, 'User')).toEqual(['User.last_login: null where string']);
  });

  it('keeps docs/routes.md what the rows say', () => {
    const onDisk = fs.existsSync(routesDocPath()) ? fs.readFileSync(routesDocPath(), 'utf8') : '(missing)';
    if (onDisk !== renderRoutesDoc()) throw new Error(`docs/routes.md is stale: regenerate it with\n\n  ${REGENERATE_ROUTES_COMMAND}\n`);
    for (const r of ROUTES) expect(onDisk).toContain(`| ${r.method.toUpperCase()} | \`${r.path.replace(/[:*]([A-Za-z_]+)/g, '{$1}')}\` |`);
  });
});
