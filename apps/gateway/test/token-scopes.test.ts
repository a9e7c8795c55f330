import { orgsTeamsV1 } from '@platform/proto';
import { bindService, createLogger, startGrpcServer, type RunningGrpcServer } from '@platform/service-kit';
import { assertScopeAllowed } from '../src/edge';
import { ROUTES } from '../src/sections';
import { TokenCache } from '../src/token-cache';
import { startTestGateway } from './test-gateway';

// Scoped tokens at the edge (docs/authentication.md): a license-proxy token gets through only the rows that list
// its scope, public rows included; unscoped tokens are not concerned.

const PROXY = { name: 'license-proxy', accountId: 7 };

describe('token scopes at the edge', () => {
  it('lets a scoped token through only the rows that list its scope', () => {
    expect(() => assertScopeAllowed({ scopes: ['license-proxy'] }, PROXY)).not.toThrow();
    expect(() => assertScopeAllowed({}, PROXY)).toThrow('this token may only be used by a license proxy');
    expect(() => assertScopeAllowed({}, undefined)).not.toThrow();
    expect(() => assertScopeAllowed({ scopes: ['license-proxy'] }, { name: 'other', accountId: 1 })).toThrow(/only be used for other/);
  });

  it('lists the license-proxy scope on exactly the routes a license proxy calls', () => {
    const scoped = ROUTES.filter((r) => r.scopes?.includes('license-proxy')).map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(scoped.sort()).toEqual(['GET /licenses/ca', 'GET /licenses/crl', 'POST /license/issue']);
  });

  it('keeps the scope of a cached token with its user', () => {
    const cache = new TokenCache(60_000);
    cache.set('t', orgsTeamsV1.User.fromPartial({ id: 1 }), PROXY);
    cache.set('u', orgsTeamsV1.User.fromPartial({ id: 1 }));
    expect(cache.lookup('t')).toEqual({ user: expect.objectContaining({ id: 1 }), scope: PROXY });
    expect(cache.lookup('u')?.scope).toBeUndefined();
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
                ? { user, tokenId: 2, scope: 'license-proxy', scopeAccountId: 9 }
                : { user, tokenId: 1, scope: '', scopeAccountId: 0 },
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
  });
});
