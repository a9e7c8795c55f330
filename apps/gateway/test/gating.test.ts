import { loadConfig } from '@platform/service-kit';
import { gatewayEnv } from '../src/config';
import { registeredRoutes } from '../src/http';
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
