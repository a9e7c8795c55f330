import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from '../src/config';
import { byFirstSegment, registeredRoutes } from '../src/http';
import { ROUTES } from '../src/sections';

/** Which of the claim routes exist on a deployment. */
function claimRoutes(env: Record<string, string>): string[] {
  return registeredRoutes(ROUTES, loadConfig(gatewayEnv, env))
    .filter((r) => r.path.startsWith('/orgs/claim'))
    .map((r) => `${r.method.toUpperCase()} ${r.path}`)
    .sort();
}

describe('deployment gating of the claim routes', () => {
  it('registers PATCH /orgs/claim/{claimID} on hosted deployments only', () => {
    expect(claimRoutes({ DEPLOYMENT_TYPE: 'Hosted' })).toEqual(['PATCH /orgs/claim/:claimID']);
    expect(claimRoutes({ DEPLOYMENT_TYPE: 'SelfHostedProduction' })).toEqual([]);
  });

  it('registers GET /orgs/claim/ on marketplace deployments or in dev run mode', () => {
    expect(claimRoutes({ DEPLOYMENT_TYPE: 'ProviderAMarketplace' })).toEqual(['GET /orgs/claim']);
    expect(claimRoutes({ DEPLOYMENT_TYPE: 'Hosted', RUN_MODE: 'dev' })).toEqual(['GET /orgs/claim', 'PATCH /orgs/claim/:claimID']);
    expect(claimRoutes({ DEPLOYMENT_TYPE: 'SelfHostedProduction', RUN_MODE: 'dev' })).toEqual(['GET /orgs/claim']);
  });
});

describe('rows by first path segment (one router each)', () => {
  it('puts every row in its segment, in the rows order, and no row in two', () => {
    const groups = byFirstSegment(ROUTES);
    expect([...groups.values()].flat()).toHaveLength(ROUTES.length);
    const orgs = groups.get('/orgs')!;
    expect(orgs.length).toBeGreaterThan(10);
    // The literal /orgs/claim rows stay before /orgs/:orgname, as declared, so they still win.
    expect(orgs.map((r) => r.path)).toEqual(ROUTES.filter((r) => r.path === '/orgs' || r.path.startsWith('/orgs/')).map((r) => r.path));
    expect(groups.has('/user')).toBe(true);
    expect(groups.get('/user')!.every((r) => r.path === '/user' || r.path.startsWith('/user/'))).toBe(true);
  });

  it('refuses a row that starts with a parameter', () => {
    expect(() => byFirstSegment([{ ...ROUTES[0], path: '/:owner/things' }])).toThrow(/literal segment/);
  });
});
