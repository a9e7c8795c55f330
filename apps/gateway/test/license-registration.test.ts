import { registeredRoutesOn } from '../src';
import { apiDocument } from '../src/openapi';
import { ROUTES } from '../src/sections';
import { startFakeBackends, type FakeBackends } from './fake-backends';
import { startTestGateway } from './test-gateway';

// License registration's row at the edge (docs/licensing.md): what the API document tells a product about its
// answers, and where clusters may not register themselves. Verification, its order and its answers for real:
// apps/contracts-licensing/test/licenses.int.test.ts and registration.int.test.ts.

describe('license registration at the edge', () => {
  it('documents 400 for empty features, then for a cluster no contract of the license’s owner binds or another account enrolled', () => {
    const doc = apiDocument(ROUTES) as { paths: Record<string, { post: { responses: Record<string, { description: string }> } }> };
    const answers = doc.paths['/register'].post.responses;
    expect(answers['400'].description).toMatch(/for empty features, then/);
    expect(answers['400'].description).toMatch(/no contract of the license’s owner binds or another account enrolled/);
    expect(answers['422'].description).toMatch(/whatever the cluster/);
  });

  describe('on a marketplace deployment', () => {
    let backends: FakeBackends;
    let gateway: { base: string; close(): void };

    beforeAll(async () => {
      backends = await startFakeBackends();
      gateway = await startTestGateway({
        ...backends.env,
        DEPLOYMENT_TYPE: 'ProviderBMarketplace',
        MARKETPLACE_API_SECRET: 'market-secret-for-tests',
        PLATFORM_ADMIN_ORG: 'none',
      });
    });
    afterAll(async () => {
      gateway?.close();
      await backends?.close();
    });

    it('refuses self-registration (403, contracts-licensing not asked) and has no contract routes', async () => {
      const res = await fetch(`${gateway.base}/api/v1/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ clusterUID: '55555555-aaaa-4aaa-8aaa-555555555555', features: 'postgres', license: 'AAAA' }),
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toBe(
        'clusters cannot register themselves on a ProviderBMarketplace deployment',
      );
      expect(backends.contractsLicensing.callsTo('licenses', 'registerLicense')).toEqual([]);
      const env = { DEPLOYMENT_TYPE: 'ProviderBMarketplace', MARKETPLACE_API_SECRET: 'x' };
      expect(registeredRoutesOn(env).filter((r) => r.path.includes('/contracts'))).toEqual([]);
      expect(registeredRoutesOn({ DEPLOYMENT_TYPE: 'Hosted' }).some((r) => r.path === '/contracts/:id/clusters/:ccID/issue-license')).toBe(
        true,
      );
      const issue = await fetch(`${gateway.base}/api/v1/contracts/1/clusters/1/issue-license`, { method: 'POST' });
      expect(issue.status).toBe(404);
    });
  });
});
