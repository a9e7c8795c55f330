import { orgsTeamsV1 } from '@platform/proto';
import { registeredRoutesOn } from '../src';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway } from './test-gateway';

// Contracts exist on hosted deployments only (docs/contracts.md): on a self-hosted one every admin and user contract
// route is absent, 404 to a site admin too, and contracts-licensing is never asked. The routes themselves on a
// hosted deployment: apps/gateway/test/contracts.test.ts.

const ROOT = orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true });
const CLUSTER = '11111111-aaaa-4aaa-8aaa-111111111111';
const contractRoutes = (env: Record<string, string>) => registeredRoutesOn(env).filter((r) => /^\/(user\/)?contracts(\/|$)/.test(r.path));

describe('contracts on a self-hosted deployment', () => {
  let backends: FakeBackends;
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    backends = await startFakeBackends({ orgsTeams: { identity: { authenticate: tokenIsLogin([ROOT]) } } });
    ({ base, close } = await startTestGateway({
      ...backends.env,
      DEPLOYMENT_TYPE: 'SelfHostedProduction',
      PLATFORM_ADMIN_ORG: 'none',
    }));
  });
  afterAll(async () => {
    close?.();
    await backends?.close();
  });

  it('answers 404 for every admin and user contract route, to site admins too', async () => {
    const routes = contractRoutes({ DEPLOYMENT_TYPE: 'Hosted' });
    expect(routes.length).toBeGreaterThanOrEqual(36);
    expect(contractRoutes({ DEPLOYMENT_TYPE: 'SelfHostedProduction' })).toEqual([]);
    const failures: string[] = [];
    for (const r of routes) {
      const path = r.path.replace(':clusterID', CLUSTER).replace(':id', '1').replace(':ccID', '1');
      const withBody = ['post', 'put', 'patch'].includes(r.method);
      const res = await fetch(`${base}/api/v1${path}`, {
        method: r.method.toUpperCase(),
        headers: { authorization: 'token root', ...(withBody ? { 'content-type': 'application/json' } : {}) },
        body: withBody ? '{}' : undefined,
      });
      if (res.status !== 404) failures.push(`${r.method} ${path}: ${res.status}`);
    }
    expect(failures).toEqual([]);
    expect(backends.contractsLicensing.calls).toEqual([]);
  });
});
