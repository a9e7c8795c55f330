import { marketplaceListenerV1 } from '@platform/proto';
import { PLATFORM_VERSION } from '@platform/service-kit';
import { describeServiceContract, startAppForTest, type AppUnderTest } from '@platform/service-testing';
import { marketplaceListenerApp } from '../src/app';

describeServiceContract({
  app: marketplaceListenerApp,
  schema: 'marketplace',
  grpcService: 'platformadmin.marketplacelistener.v1.MarketplaceListenerService',
  definition: marketplaceListenerV1.MarketplaceListenerServiceService,
  env: { MARKETPLACE_HTTP_PORT: '0' },
});

describe('webhook listener HTTP root', () => {
  let app: AppUnderTest;
  let base: string;
  beforeAll(async () => {
    app = await startAppForTest(marketplaceListenerApp, { MARKETPLACE_HTTP_PORT: '0' });
    base = `http://127.0.0.1:${app.running.httpPort}/marketplace/api/v1`;
  });
  afterAll(() => app.stop());
  it('serves the public GET /version', async () => {
    const res = await fetch(`${base}/version`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: PLATFORM_VERSION });
  });

  it('answers unknown paths with a 404 ApiError', async () => {
    const res = await fetch(`${base}/marketplaces/nowhere`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'no such webhook route' });
  });
});
