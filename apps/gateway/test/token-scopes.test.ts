import { giteaApi } from 'gitea-js';
import { InputError, NotAuthenticatedError } from '@platform/errors';
import { orgsTeamsOrgsV1, orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
import { parseAccessScopes, scopesCover } from '@platform/service-kit';
import { isAudited } from '../src/audit';
import { assertTokenMayCall } from '../src/edge';
import { ROUTES } from '../src/sections';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Token limits at the edge (docs/authentication.md): a license-proxy token gets through only the rows that list its
// use, public rows included; every token gets through only the rows whose Gitea scope its scopes cover; Basic
// credentials are limited by neither.

const PROXY = { name: 'license-proxy', accountId: 7 };
const ALL = ['all'];

describe('token limits at the edge', () => {
  it('lets a one-use token through only the rows that list its use', () => {
    const row = { scope: 'write:organization' as const };
    expect(() => assertTokenMayCall({ ...row, uses: ['license-proxy'] }, { scope: PROXY, accessScopes: ALL })).not.toThrow();
    expect(() => assertTokenMayCall(row, { scope: PROXY, accessScopes: ALL })).toThrow('this token may only be used by a license proxy');
    expect(() => assertTokenMayCall(row, { scope: undefined, accessScopes: ALL })).not.toThrow();
    expect(() =>
      assertTokenMayCall({ ...row, uses: ['license-proxy'] }, { scope: { name: 'other', accountId: 1 }, accessScopes: ALL }),
    ).toThrow(/only be used for other/);
  });

  it('refuses a token whose scopes do not cover the row, naming the scope; Basic credentials pass', () => {
    const userOnly = { scope: undefined, accessScopes: ['read:user'] };
    expect(() => assertTokenMayCall({ scope: 'write:organization' }, userOnly)).toThrow(
      'token does not have at least one of required scope(s): [write:organization] (token scopes: read:user)',
    );
    expect(() => assertTokenMayCall({ scope: 'read:user' }, userOnly)).not.toThrow();
    expect(() => assertTokenMayCall({ scope: 'write:user' }, userOnly)).toThrow(/\[write:user\]/);
    expect(() => assertTokenMayCall({ scope: 'write:admin' }, { scope: undefined, accessScopes: undefined })).not.toThrow();
    expect(() => assertTokenMayCall({ scope: 'write:admin' }, undefined)).not.toThrow();
  });

  it("reads Gitea's vocabulary: write covers read, all covers everything, unknown scopes are named", () => {
    expect(scopesCover(['write:organization'], 'read:organization')).toBe(true);
    expect(scopesCover(['read:organization'], 'write:organization')).toBe(false);
    expect(scopesCover(['all'], 'write:admin')).toBe(true);
    expect(scopesCover(['write:user'], 'read:organization')).toBe(false);
    expect(parseAccessScopes([])).toEqual({ scopes: ['all'], unknown: [] });
    expect(parseAccessScopes(['read:user', 'write:user', 'read:misc'])).toEqual({ scopes: ['write:user', 'read:misc'], unknown: [] });
    expect(parseAccessScopes(['read:user,write:organization'])).toEqual({ scopes: ['write:organization', 'read:user'], unknown: [] });
    expect(parseAccessScopes(['read:user', 'all'])).toEqual({ scopes: ['all'], unknown: [] });
    expect(parseAccessScopes(['write:repository', 'read:user']).unknown).toEqual(['write:repository']);
  });

  it('declares a scope on every row that a token may call, reads for GET, writes for every change', () => {
    // A browser's navigation that begins a change (linking the provider's account: the link is written at the
    // provider's redirect back) is a GET and still needs the scope of the change.
    const navigationsThatWrite = new Set(['/user/oidc/link/start']);
    for (const r of ROUTES) {
      expect([r.method, r.path, /^(read|write):(organization|user|admin|misc)$/.test(r.scope)]).toEqual([r.method, r.path, true]);
      if (r.method === 'get')
        expect([r.path, r.scope.startsWith(navigationsThatWrite.has(r.path) ? 'write:' : 'read:')]).toEqual([r.path, true]);
      if (r.path.startsWith('/admin/')) expect([r.path, r.scope.endsWith(':admin')]).toEqual([r.path, true]);
      // A row that changes something (every write the audit trail records) needs a write scope; a question asked by
      // POST (not audited) may take a read one.
      if (isAudited(r)) expect([r.method, r.path, r.scope.startsWith('write:')]).toEqual([r.method, r.path, true]);
    }
  });

  it('lists the license-proxy use on exactly the routes a license proxy calls', () => {
    const proxied = ROUTES.filter((r) => r.uses?.includes('license-proxy')).map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(proxied.sort()).toEqual(['GET /licenses/ca', 'GET /licenses/crl', 'POST /license/issue']);
  });

  describe('through the gateway', () => {
    let backend: RunningGrpcServer;
    let base: string;
    let close: () => void;
    beforeAll(async () => {
      const user = orgsTeamsV1.User.fromPartial({ id: 1, login: 'alice', active: true });
      backend = await startGrpcServer({
        name: 'orgs-teams',
        port: 0,
        host: '127.0.0.1',
        services: [
          bindService(orgsTeamsV1.OrgsTeamsServiceService, {
            authenticate: async ({ token }: { token: string }) =>
              token === 'scoped'
                ? { user, tokenId: 2, scope: 'license-proxy', scopeAccountId: 9, accessScopes: ['all'] }
                : token === 'read-user'
                  ? { user, tokenId: 3, scope: '', scopeAccountId: 0, accessScopes: ['read:user'] }
                  : { user, tokenId: 1, scope: '', scopeAccountId: 0, accessScopes: ['all'] },
          } as never),
        ],
        protoFiles: ['platformadmin/orgsteams/v1/orgsteams.proto'],
        log: createLogger('stub', 'silent'),
      });
      ({ base, close } = await startTestGateway({ ORGS_TEAMS_GRPC_ADDR: `127.0.0.1:${backend.port}` }));
    });
    afterAll(async () => {
      close?.();
      await backend?.shutdown(100);
    });
    const get = (path: string, token: string) => fetch(`${base}/api/v1${path}`, { headers: { authorization: `token ${token}` } });

    it('refuses a license-proxy token on a token row and on a public row with 403', async () => {
      for (const path of ['/user', '/orgs/acme']) {
        const res = await get(path, 'scoped');
        expect(res.status).toBe(403);
        expect(((await res.json()) as { message: string }).message).toBe('this token may only be used by a license proxy');
      }
      expect((await get('/user', 'plain')).status).toBe(200);
    });

    it('refuses a read:user token on an organization row before anything is asked, and lets it read the user', async () => {
      const res = await fetch(`${base}/api/v1/orgs`, {
        method: 'POST',
        headers: { authorization: 'token read-user', 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'acme' }),
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(/required scope\(s\): \[write:organization\]/);
      expect((await get('/user', 'read-user')).status).toBe(200);
    });
  });

  describe('tokens made with scopes and used', () => {
    // A stand-in orgs-teams keeps alice's tokens with the scopes it was asked for, normalized and checked by the
    // same parseAccessScopes orgs-teams uses (its own test covers what it stores); the edge does the rest.
    const ALICE = orgsTeamsV1.User.fromPartial({ id: 5, login: 'alice', active: true, allowCreateOrganization: true });
    const BASIC = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
    let backends: FakeBackends;
    let base: string;
    let close: () => void;
    const tokens: { id: number; name: string; sha1: string; accessScopes: string[] }[] = [];

    beforeAll(async () => {
      backends = await startFakeBackends({
        orgsTeams: {
          identity: {
            authenticateBasic: async ({ username, password }) => {
              if (username !== 'alice' || password !== 'alice-password') throw new NotAuthenticatedError('invalid credentials');
              return orgsTeamsV1.AuthenticateResponse.fromPartial({ user: ALICE });
            },
            authenticate: async ({ token }) => {
              const found = tokens.find((t) => t.sha1 === token);
              if (!found) throw new NotAuthenticatedError('invalid token');
              return { user: ALICE, tokenId: found.id, scope: '', scopeAccountId: 0, accessScopes: found.accessScopes };
            },
            createToken: async ({ name, accessScopes }) => {
              const { scopes, unknown } = parseAccessScopes(accessScopes);
              if (unknown.length) throw new InputError(`invalid access token scope: ${unknown.join(', ')}`);
              const made = { id: tokens.length + 1, name, sha1: String(tokens.length + 1).padStart(40, 'a'), accessScopes: scopes };
              tokens.push(made);
              return { ...made, tokenLastEight: made.sha1.slice(-8) };
            },
            listTokens: async () => ({
              tokens: tokens.map((t) => orgsTeamsV1.TokenInfo.fromPartial({ id: t.id, name: t.name, accessScopes: t.accessScopes })),
            }),
          },
          organizations: {
            createOrg: async ({ username }) => orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username, visibility: 'public' }),
            getOrg: async ({ name }) => orgsTeamsOrgsV1.Organization.fromPartial({ id: 10, username: name, visibility: 'public' }),
          },
        },
        authz: { authz: { checkPermission: async () => ({ allowed: true, dependsOn: [] }) } },
      });
      ({ base, close } = await startTestGateway({ ...backends.env, PLATFORM_ADMIN_ORG: 'none' }));
    });
    afterAll(async () => {
      close?.();
      await backends?.close();
    });

    const call = async (authorization: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}/api/v1${path}`, {
        method,
        headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const create = (body: unknown) => call(BASIC, 'POST', '/users/alice/tokens', body);
    const as = (token: string, method: string, path: string, body?: unknown) => call(`token ${token}`, method, path, body);

    it('limits a read:user token to reading the user: creating an organization is 403 naming write:organization, made nowhere', async () => {
      const made = await create({ name: 'reader', scopes: ['read:user'] });
      expect(made).toMatchObject({ status: 201, body: { name: 'reader', scopes: ['read:user'] } });
      const token = made.body.sha1 as string;

      expect((await as(token, 'GET', '/user')).body.login).toBe('alice');
      const refused = await as(token, 'POST', '/orgs', { username: 'scoped-co' });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain('required scope(s): [write:organization]');
      expect(backends.orgsTeams.callsTo('organizations', 'createOrg')).toEqual([]);
      // Reading organizations is outside read:user too, and so is a public row when the token is presented.
      expect((await as(token, 'GET', '/user/orgs')).status).toBe(403);
      const version = await as(token, 'GET', '/version');
      expect(version.status).toBe(403);
      expect(version.body.message).toContain('[read:misc]');
    });

    it('lets write cover read and keeps an unscoped token able to do everything', async () => {
      const writer = (await create({ name: 'org-writer', scopes: ['write:organization'] })).body.sha1 as string;
      expect((await as(writer, 'POST', '/orgs', { username: 'writer-co' })).status).toBe(201);
      expect((await as(writer, 'GET', '/orgs/writer-co/teams')).status).toBe(200);
      expect((await as(writer, 'GET', '/user')).status).toBe(403);

      const plain = await create({ name: 'plain' });
      expect(plain.body.scopes).toEqual(['all']);
      expect((await as(plain.body.sha1, 'GET', '/user')).status).toBe(200);
      expect((await as(plain.body.sha1, 'GET', '/version')).status).toBe(200);
    });

    it('refuses scopes outside the vocabulary with 400 naming them, and makes nothing', async () => {
      const bad = await create({ name: 'repo', scopes: ['write:repository', 'read:user'] });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('write:repository');
      const listed = await call(BASIC, 'GET', '/users/alice/tokens');
      expect(listed.body.map((t: { name: string }) => t.name)).not.toContain('repo');
    });

    it('returns each token with its scopes in the list, as gitea-js reads them', async () => {
      const gitea = giteaApi(base, {
        customFetch: (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
          const headers = new Headers(init?.headers);
          headers.set('authorization', BASIC);
          return fetch(input, { ...init, headers });
        },
      });
      const made = await gitea.users.userCreateToken('alice', { name: 'from-gitea-js', scopes: ['read:organization', 'read:misc'] });
      expect(made.data.scopes).toEqual(['read:organization', 'read:misc']);
      const { data } = await gitea.users.userGetTokens('alice');
      const byName = Object.fromEntries(data.map((t) => [t.name, t.scopes]));
      expect(byName).toMatchObject({ reader: ['read:user'], 'org-writer': ['write:organization'], plain: ['all'] });
      expect(byName['from-gitea-js']).toEqual(['read:organization', 'read:misc']);
    });
  });
});
