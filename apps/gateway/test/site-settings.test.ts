import { ConflictError, InputError, NotFoundError, ValidationError } from '@platform/errors';
import { notificationsV1, orgsTeamsOrgsV1, orgsTeamsSettingsV1, orgsTeamsV1 } from '@platform/proto';
import { type FakeBackends, startFakeBackends, tokenIsLogin } from './fake-backends';
import { startTestGateway, type TestGateway } from './test-gateway';

// Site settings as a client walks them (docs/site-settings.md): branding (its ETag, 304, edit_branding_options:org on
// the org context, and only through the administrative organization when there is one), the email-domain whitelist
// and the registration toggle (site-admin permissions), against a stand-in orgs-teams that keeps them in memory.
// What orgs-teams itself checks (images, domain names, lower-casing, the settings kept):
// apps/orgs-teams/src/settings/settings.int.test.ts; bodies that give no value: settings-bodies.test.ts.

const USERS: Record<string, orgsTeamsV1.User> = {
  root: orgsTeamsV1.User.fromPartial({ id: 1, login: 'root', active: true, isAdmin: true }),
  alice: orgsTeamsV1.User.fromPartial({ id: 2, login: 'alice', active: true }),
  bob: orgsTeamsV1.User.fromPartial({ id: 3, login: 'bob', active: true }),
  carol: orgsTeamsV1.User.fromPartial({ id: 4, login: 'carol', active: true }),
};
/** alice owns acme and alices-org; bob is a member of acme without any grant, carol of none; root owns the administrative ones. */
const ORGS: Record<string, { id: number; owner: number }> = {
  acme: { id: 10, owner: 2 },
  'alices-org': { id: 11, owner: 2 },
  'platform-admin': { id: 12, owner: 1 },
  admins: { id: 13, owner: 1 },
};
const PNG = `data:image/png;base64,${'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='}`;

describe('site settings at the edge', () => {
  let backends: FakeBackends;
  /** What the stand-in orgs-teams keeps. */
  let branding: orgsTeamsSettingsV1.Branding;
  let domains: string[];
  let registrationDisabled: boolean;
  let version = 0;
  const DEFAULT_BRANDING = orgsTeamsSettingsV1.Branding.fromPartial({
    logo: 'data:image/svg+xml;base64,PHN2Zz4=',
    favicons: { any: 'data:image/svg+xml;base64,PHN2Zz4=' },
    primaryColor: '#1f6feb',
    runMode: 'dev',
    deploymentType: 'SelfHostedProduction',
    isOfflineInstaller: true,
    showAppTag: false,
    appName: 'Platform',
    etag: '"v0"',
  });

  beforeAll(async () => {
    backends = await startFakeBackends({
      orgsTeams: {
        identity: {
          authenticate: tokenIsLogin(USERS),
        },
        organizations: {
          getOrg: async ({ name }) => {
            if (!ORGS[name]) throw new NotFoundError(`organization ${name} does not exist`);
            return orgsTeamsOrgsV1.Organization.fromPartial({ id: ORGS[name].id, username: name, visibility: 'public' });
          },
        },
        siteSettings: {
          getBranding: async () => branding,
          updateBranding: async (req) => {
            if (req.primaryColor !== undefined && !/^(#[0-9a-fA-F]{6})?$/.test(req.primaryColor))
              throw new InputError('invalid option primaryColor: a #rrggbb colour');
            version += 1;
            branding = {
              ...branding,
              ...(req.appName !== undefined && { appName: req.appName || 'Platform' }),
              ...(req.primaryColor !== undefined && { primaryColor: req.primaryColor.toLowerCase() || '#1f6feb' }),
              ...(req.showAppTag !== undefined && { showAppTag: req.showAppTag }),
              ...(req.logo !== undefined && { logo: req.logo }),
              ...(req.favicon !== undefined && { favicons: { '1x1': req.favicon } }),
              etag: `"v${version}"`,
            };
            return branding;
          },
          listAllowedDomains: async () => ({ names: domains }),
          addAllowedDomain: async ({ name }) => {
            const domain = name.toLowerCase();
            if (domains.includes(domain)) throw new ConflictError(`domain ${domain} is already allowed`);
            domains = [...domains, domain].sort();
            return { names: domains };
          },
          removeAllowedDomain: async ({ name }) => {
            const domain = name.toLowerCase();
            if (!domains.includes(domain)) throw new InputError(`domain ${domain} is not in the allowed domains`);
            domains = domains.filter((d) => d !== domain);
            return { names: domains };
          },
          getRegistration: async () => ({ disableRegistration: registrationDisabled }),
          setRegistration: async ({ disableRegistration }) => {
            registrationDisabled = disableRegistration;
            return { disableRegistration };
          },
        },
      },
      authz: {
        // Owners hold every permission of their organizations; site permissions are root's alone.
        authz: {
          checkPermission: async ({ userId, permission, objectId }) => {
            if (userId === USERS.root.id) return { allowed: true, dependsOn: [] };
            if (permission.endsWith(':site_admin')) return { allowed: false, dependsOn: [] };
            const org = Object.values(ORGS).find((o) => o.id === objectId);
            return { allowed: org?.owner === userId, dependsOn: [] };
          },
        },
      },
      contractsLicensing: {
        notifications: {
          // As contracts-licensing refuses a host that is not global unicast (apps/contracts-licensing/test/notices.int.test.ts).
          createWebhookEndpoint: async ({ url }) => {
            if (new URL(url).hostname === '127.0.0.1') {
              const why = '127.0.0.1 is a loopback address: webhooks reach only global unicast (public) addresses';
              throw new ValidationError(`url: ${why}`, [{ field: 'url', description: why }]);
            }
            return {
              endpoint: notificationsV1.WebhookEndpoint.fromPartial({ id: 7, url, events: ['quota.threshold'], enabled: true }),
              secret: 'whsec_abc',
            };
          },
        },
      },
    });
  });
  beforeEach(() => {
    branding = DEFAULT_BRANDING;
    domains = [];
    registrationDisabled = true;
    backends.reset();
  });
  afterAll(async () => {
    await backends?.close();
  });

  /** A gateway with these settings, closed after the test. */
  const gateways: TestGateway[] = [];
  afterEach(() => gateways.splice(0).forEach((g) => g.close()));
  const gateway = async (env: Record<string, string> = {}) => {
    const g = await startTestGateway({ ...backends.env, DEPLOYMENT_TYPE: 'SelfHostedProduction', PLATFORM_ADMIN_ORG: 'none', ...env });
    gateways.push(g);
    const call = async (who: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${g.base}/api/v1${path}`, {
        method,
        headers: {
          ...(who ? { authorization: `token ${who}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
    };
    return call;
  };
  const updates = () => backends.orgsTeams.callsTo('siteSettings', 'updateBranding');

  describe('GET /branding', () => {
    it('answers the branding and the deployment facts to anyone, with its ETag and no-cache', async () => {
      const call = await gateway();
      const res = await call(undefined, 'GET', '/branding');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        logo: DEFAULT_BRANDING.logo,
        favicons: DEFAULT_BRANDING.favicons,
        primaryColor: '#1f6feb',
        runMode: 'dev',
        deploymentType: 'SelfHostedProduction',
        isOfflineInstaller: true,
        showAppTag: false,
        appName: 'Platform',
      });
      expect(res.headers.get('etag')).toBe('"v0"');
      expect(res.headers.get('cache-control')).toBe('no-cache');
    });

    it('answers 304 without a body to a matching If-None-Match (exact, weak, in a list, or *) and 200 otherwise', async () => {
      const call = await gateway();
      for (const inm of ['"v0"', 'W/"v0"', '"other", "v0"', '*']) {
        const res = await call(undefined, 'GET', '/branding', undefined, { 'if-none-match': inm });
        expect([inm, res.status, res.body, res.headers.get('etag')]).toEqual([inm, 304, undefined, '"v0"']);
      }
      const stale = await call(undefined, 'GET', '/branding', undefined, { 'if-none-match': '"something-else"' });
      expect([stale.status, stale.body.appName]).toEqual([200, 'Platform']);
    });
  });

  describe('POST /branding', () => {
    const change = { appName: 'Acme Cloud', primaryColor: '#FF8800', showAppTag: true, logo: PNG };

    it('needs a token (401), the org context (400; 403 for an unknown org) and edit_branding_options:org (403)', async () => {
      const call = await gateway();
      expect((await call(undefined, 'POST', '/branding?org=acme', change)).status).toBe(401);
      const noOrg = await call('alice', 'POST', '/branding', change);
      expect([noOrg.status, noOrg.body.message]).toEqual([400, expect.stringMatching(/org query parameter is required/)]);
      expect((await call('alice', 'POST', '/branding?org=nope', change)).status).toBe(403);
      // A non-member and a member without the permission.
      expect((await call('carol', 'POST', '/branding?org=acme', change)).status).toBe(403);
      expect(await call('bob', 'POST', '/branding?org=acme', change)).toMatchObject({
        status: 403,
        body: { message: 'you do not have the edit_branding_options:org permission', url: expect.any(String) },
      });
      expect(updates()).toEqual([]);
    });

    it('lets the owner change options: 200 with the new branding and its new ETag, which the next GET matches', async () => {
      const call = await gateway();
      const res = await call('alice', 'POST', '/branding?org=acme', change);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ appName: 'Acme Cloud', primaryColor: '#ff8800', showAppTag: true, logo: PNG, runMode: 'dev' });
      expect(res.headers.get('etag')).toBe('"v1"');
      expect(updates()).toEqual([expect.objectContaining({ ...change, userId: USERS.alice.id })]);
      const reread = await call(undefined, 'GET', '/branding', undefined, { 'if-none-match': '"v0"' });
      expect([reread.status, reread.body, reread.headers.get('etag')]).toEqual([200, res.body, '"v1"']);
      expect((await call(undefined, 'GET', '/branding', undefined, { 'if-none-match': '"v1"' })).status).toBe(304);
      // A favicon is passed on, and answered under the size orgs-teams reports.
      const favicon = await call('alice', 'POST', '/branding?org=acme', { favicon: PNG });
      expect(favicon.body).toMatchObject({ appName: 'Acme Cloud', favicons: { '1x1': PNG } });
      // A site admin may in any organization context, "" putting the defaults back.
      expect(await call('root', 'POST', '/branding?org=acme', { appName: '', primaryColor: '' })).toMatchObject({
        status: 200,
        body: { appName: 'Platform', primaryColor: '#1f6feb' },
      });
    });

    it('answers 400 for options of the wrong type or too long, orgs-teams’ 400 as it is, and 422 for a body that is no object', async () => {
      const call = await gateway();
      for (const bad of [{ primaryColor: 12 }, { showAppTag: 'yes' }, { appName: 'x'.repeat(65) }]) {
        const res = await call('alice', 'POST', '/branding?org=acme', bad);
        expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(/^invalid option/)]);
      }
      expect(updates()).toEqual([]);
      const orange = await call('alice', 'POST', '/branding?org=acme', { primaryColor: 'orange' });
      expect([orange.status, orange.body.message]).toEqual([400, expect.stringMatching(/^invalid option/)]);
      expect((await call('alice', 'POST', '/branding?org=acme', ['appName'])).status).toBe(422);
      expect((await call('alice', 'POST', '/branding?org=acme', '{"appName":')).status).toBe(422);
      expect(updates()).toHaveLength(1);
      expect(branding).toBe(DEFAULT_BRANDING);
    });

    it('takes changes only through the administrative organization when there is one (by default platform-admin)', async () => {
      // An empty setting reads as unset: the default.
      for (const [setting, admin] of [
        ['admins', 'admins'],
        ['', 'platform-admin'],
      ]) {
        const call = await gateway({ PLATFORM_ADMIN_ORG: setting });
        const other = await call('alice', 'POST', '/branding?org=alices-org', { appName: 'Hijacked' });
        expect(other).toMatchObject({
          status: 403,
          body: { message: `branding is managed through the administrative organization ${admin}` },
        });
        expect(await call('root', 'POST', `/branding?org=${admin}`, { appName: 'Mine' })).toMatchObject({
          status: 200,
          body: { appName: 'Mine' },
        });
      }
      expect(updates().map((u) => u.appName)).toEqual(['Mine', 'Mine']);
    });
  });

  describe('allowed domains', () => {
    it('GET answers the list to anyone, empty when there is none', async () => {
      const call = await gateway();
      expect(await call(undefined, 'GET', '/allowed-domains')).toMatchObject({ status: 200, body: [] });
    });

    it('POST and PATCH need a token (401), the org context (400/404) and edit_allowed_domains:site_admin (403)', async () => {
      const call = await gateway();
      for (const method of ['POST', 'PATCH']) {
        expect((await call(undefined, method, '/allowed-domains?org=acme', { name: 'example.com' })).status).toBe(401);
        expect((await call('root', method, '/allowed-domains', { name: 'example.com' })).status).toBe(400);
        expect((await call('root', method, '/allowed-domains?org=nope', { name: 'example.com' })).status).toBe(404);
        // The organization's owner is no site admin.
        expect(await call('alice', method, '/allowed-domains?org=acme', { name: 'example.com' })).toMatchObject({
          status: 403,
          body: { message: 'you do not have the edit_allowed_domains:site_admin permission' },
        });
        expect((await call('bob', method, '/allowed-domains?org=acme', { name: 'example.com' })).status).toBe(403);
      }
      expect(backends.orgsTeams.callsTo('siteSettings', 'addAllowedDomain')).toEqual([]);
      expect(backends.orgsTeams.callsTo('siteSettings', 'removeAllowedDomain')).toEqual([]);
    });

    it('adds (200 with the list), passes 409 and 400 on, removes with PATCH; a name that is no string is 400', async () => {
      const call = await gateway();
      expect(await call('root', 'POST', '/allowed-domains?org=acme', { name: 'Example.COM' })).toMatchObject({
        status: 200,
        body: ['example.com'],
      });
      expect(backends.orgsTeams.callsTo('siteSettings', 'addAllowedDomain')).toEqual([{ name: 'Example.COM', userId: USERS.root.id }]);
      expect(await call('root', 'POST', '/allowed-domains?org=acme', { name: 'corp.example.org' })).toMatchObject({
        status: 200,
        body: ['corp.example.org', 'example.com'],
      });
      expect(await call('root', 'POST', '/allowed-domains?org=acme', { name: 'EXAMPLE.com' })).toMatchObject({
        status: 409,
        body: { message: 'domain example.com is already allowed' },
      });
      for (const bad of [{ name: 42 }, {}, { name: ' ' }])
        expect((await call('root', 'POST', '/allowed-domains?org=acme', bad)).status).toBe(400);
      expect((await call(undefined, 'GET', '/allowed-domains')).body).toEqual(['corp.example.org', 'example.com']);
      expect(await call('root', 'PATCH', '/allowed-domains?org=acme', { name: 'example.COM' })).toMatchObject({
        status: 200,
        body: ['corp.example.org'],
      });
      expect(await call('root', 'PATCH', '/allowed-domains?org=acme', { name: 'example.com' })).toMatchObject({
        status: 400,
        body: { message: 'domain example.com is not in the allowed domains' },
      });
    });
  });

  describe('registration toggle', () => {
    it('GET answers RegistrationOpts to anyone', async () => {
      const call = await gateway();
      expect(await call(undefined, 'GET', '/disable-registration')).toMatchObject({ status: 200, body: { disableRegistration: true } });
    });

    it('POST needs a token (401), the org context (400/404) and update_user_registration:site_admin (403)', async () => {
      const call = await gateway();
      expect((await call(undefined, 'POST', '/disable-registration?org=acme', { disableRegistration: false })).status).toBe(401);
      expect((await call('root', 'POST', '/disable-registration', { disableRegistration: false })).status).toBe(400);
      expect((await call('root', 'POST', '/disable-registration?org=nope', { disableRegistration: false })).status).toBe(404);
      expect(await call('alice', 'POST', '/disable-registration?org=acme', { disableRegistration: false })).toMatchObject({
        status: 403,
        body: { message: 'you do not have the update_user_registration:site_admin permission' },
      });
      expect(backends.orgsTeams.callsTo('siteSettings', 'setRegistration')).toEqual([]);
    });

    it('answers 415 for a body that is not JSON and 422 for a non-boolean, changing nothing; a site admin switches it', async () => {
      const call = await gateway();
      // A text body once read as "absent", which opened sign-up.
      const asText = await call('root', 'POST', '/disable-registration?org=acme', JSON.stringify({ disableRegistration: false }), {
        'content-type': 'text/plain',
      });
      expect(asText).toMatchObject({ status: 415, body: { message: 'the body must be application/json', url: expect.any(String) } });
      expect((await call('root', 'POST', '/disable-registration?org=acme', { disableRegistration: 'yes' })).status).toBe(422);
      expect(backends.orgsTeams.callsTo('siteSettings', 'setRegistration')).toEqual([]);
      expect(await call('root', 'POST', '/disable-registration?org=acme', { disableRegistration: false })).toMatchObject({
        status: 200,
        body: { disableRegistration: false },
      });
      expect((await call(undefined, 'GET', '/disable-registration')).body).toEqual({ disableRegistration: false });
      expect(backends.orgsTeams.callsTo('siteSettings', 'setRegistration')).toEqual([
        { disableRegistration: false, userId: USERS.root.id },
      ]);
    });
  });

  it('answers a webhook URL contracts-licensing refuses 422 naming the field, on the site’s and an organization’s rows', async () => {
    const call = await gateway();
    for (const [who, path, events] of [
      ['root', '/admin/notifications/webhooks', ['quota.threshold']],
      ['alice', '/orgs/acme/notifications/webhooks', ['contract.expiring']],
    ] as const) {
      expect(await call(who, 'POST', path, { url: 'https://2130706433/hook', events })).toMatchObject({
        status: 422,
        body: { message: expect.stringMatching(/127\.0\.0\.1 is a loopback/), errors: [{ field: 'url', description: expect.any(String) }] },
      });
      expect(await call(who, 'POST', path, { url: 'https://8.8.8.8/hook', events })).toMatchObject({
        status: 201,
        body: { url: 'https://8.8.8.8/hook', secret: expect.stringMatching(/^whsec_/) },
      });
    }
  });
});
