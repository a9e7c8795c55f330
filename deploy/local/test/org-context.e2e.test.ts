import { bootTestPlatform, type TestPlatform } from './harness';

/**
 * The `org` query context over HTTP (docs/gateway.md, docs/authentication.md) on a hosted, billing-enabled
 * deployment, so the dashboard and contract rows exist. An `org` a caller cannot act for — no such organization,
 * or a private one it is not a member of — is 403 with one message for both, so the answer never tells whether it
 * exists; a site-admin row is 403 to anyone else whatever `org` names; members act for their organization; site
 * admins see every organization, so an unknown one is 404 for them; an organization named in the path stays 404.
 */

const CLUSTER = '6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e';

/** Site-admin rows (`requires` on the site), with the body they are sent (always given: jest reads a missing one as `done`). */
const SITE_ROWS: [string, string, unknown][] = [
  ['GET', '/dashboard/summary/generated-months', undefined],
  ['GET', '/dashboard/summary/2026/10/usage-report/products/productdb/views/clusters-usage-view', undefined],
  ['GET', '/dashboard/summary/2026/10/download', undefined],
  ['GET', '/dashboard/users/active', undefined],
  ['GET', '/dashboard/system-outages/report', undefined],
  ['GET', '/dashboard/marketplaces/subscriptions', undefined],
  ['DELETE', '/dashboard/marketplaces/ProviderA/sub-1', undefined],
  ['GET', '/user/clients', undefined],
  ['GET', `/user/client/secret/status`, undefined],
  ['GET', '/contracts', undefined],
  ['GET', `/contracts/active/associated-clusters/${CLUSTER}/status`, undefined],
  ['POST', '/allowed-domains', { name: 'example.com' }],
];

/** Rows that act for `org` with requirements on the organization, not the site. */
const ORG_ROWS: [string, string, unknown][] = [
  ['GET', '/user/contracts', undefined],
  ['GET', '/user/contracts/active-offline-contracts', undefined],
  ['POST', '/user/license-proxy', {}],
  ['POST', '/metricsproxy/register', { clusterUID: CLUSTER }],
  ['POST', '/metricsproxy/unregister', { clusterUID: CLUSTER }],
  ['POST', '/branding', { appName: 'Mine' }],
  ['GET', '/authz/roles', undefined],
];

const withOrg = (path: string, org: string) => `${path}${path.includes('?') ? '&' : '?'}org=${org}`;

describe('the org context (hosted, billing enabled)', () => {
  let t: TestPlatform;
  const api: TestPlatform['api'] = (...args) => t.api(...args);

  beforeAll(async () => {
    t = await bootTestPlatform({ DEPLOYMENT_TYPE: 'Hosted', BILLING_ENABLED: 'true' });
    // olivia owns the public acme and the private secret; mallory belongs to no organization.
    for (const login of ['olivia', 'mallory']) await t.signUp(login);
    expect((await api('olivia', 'POST', '/orgs', { username: 'acme' })).status).toBe(201);
    expect((await api('olivia', 'POST', '/orgs', { username: 'secret', visibility: 'private' })).status).toBe(201);
  }, 120_000);
  afterAll(() => t?.stop());

  describe('a non-admin', () => {
    it.each(ORG_ROWS)('%s %s: 403 with one message for an unknown org and a private org it is not in', async (method, path, body) => {
      const unknown = await api('mallory', method, withOrg(path, 'nosuchorg'), body);
      const hidden = await api('mallory', method, withOrg(path, 'secret'), body);
      expect(unknown).toEqual({ status: 403, body: { message: 'you cannot act for organization "nosuchorg"', url: expect.any(String) } });
      expect(hidden).toEqual({ status: 403, body: { message: 'you cannot act for organization "secret"', url: expect.any(String) } });
    });

    it.each(SITE_ROWS)('%s %s: 403 on a site-admin row whatever org names', async (method, path, body) => {
      const answers = [];
      for (const org of ['nosuchorg', 'secret', 'acme']) answers.push(await api('mallory', method, withOrg(path, org), body));
      answers.push(await api('mallory', method, path, body));
      // The organization's owner too: the row is the site's, not the organization's.
      answers.push(await api('olivia', method, withOrg(path, 'secret'), body));
      for (const res of answers) expect(res.status).toBe(403);
      // The same message whichever organization is named (or none): nothing is learned of it.
      expect(new Set(answers.map((res) => res.body.message)).size).toBe(1);
      expect(answers[0].body.message).not.toMatch(/nosuchorg|secret|exist/);
    });

    it('acting for the administrative organization it is not in is 403 like any other', async () => {
      const res = await api('mallory', 'POST', '/branding?org=platform-admin', { appName: 'Mine' });
      expect(res).toEqual({ status: 403, body: { message: 'you cannot act for organization "platform-admin"', url: expect.any(String) } });
    });
  });

  describe('a member', () => {
    it('acts for its private organization', async () => {
      expect((await api('olivia', 'GET', '/user/contracts?org=secret')).status).toBe(200);
      expect((await api('olivia', 'GET', '/user/contracts/active-offline-contracts?org=secret')).status).toBe(200);
      expect((await api('olivia', 'GET', '/authz/roles?org=secret')).status).toBe(200);
    });

    it('reaches the row’s own checks: a public organization it is not in is the row’s 403, not the org context’s', async () => {
      const res = await api('mallory', 'GET', '/authz/roles?org=acme');
      expect(res.status).toBe(403);
      expect(res.body.message).not.toMatch(/cannot act for/);
    });
  });

  describe('a site admin', () => {
    it('gets 404 for an unknown org, on site-admin rows and the others', async () => {
      for (const [method, path, body] of [...SITE_ROWS, ...ORG_ROWS]) {
        const res = await api('root', method, withOrg(path, 'nosuchorg'), body);
        expect([`${method} ${path}`, res.status]).toEqual([`${method} ${path}`, 404]);
      }
    });

    it('acts for a private organization it is not a member of', async () => {
      expect((await api('root', 'GET', '/dashboard/summary/generated-months?org=secret')).status).toBe(200);
      expect((await api('root', 'GET', '/contracts?org=secret')).status).toBe(200);
      expect((await api('root', 'GET', '/user/contracts?org=secret')).status).toBe(200);
    });
  });

  it('keeps 404 for an organization named in the path, unknown or invisible', async () => {
    expect((await api('mallory', 'GET', '/orgs/nosuchorg')).status).toBe(404);
    expect((await api('mallory', 'GET', '/orgs/secret')).status).toBe(404);
    expect((await api('mallory', 'GET', '/orgs/nosuchorg/teams')).status).toBe(404);
    expect((await api('root', 'GET', '/orgs/nosuchorg')).status).toBe(404);
    expect((await api('olivia', 'GET', '/orgs/secret')).status).toBe(200);
  });
});
