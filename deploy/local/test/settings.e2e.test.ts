import { bootTestPlatform, type TestPlatform } from './harness';

// Site settings over HTTP as a client walks them: branding (ETag, 304, the edit_branding_options:org
// check on the org context), the email-domain whitelist and the registration toggle (site-admin checks),
// with every 401/403/400/404/409/422 path and authorization changes seen on the very next request.
// Decisions: docs/site-settings.md.

/** A real 1×1 PNG. */
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('site settings over HTTP', () => {
  let harness: TestPlatform;
  const api: TestPlatform['api'] = (...args) => harness.api(...args);
  let devs: number;

  const status = async (who: string | undefined, method: string, path: string, json?: unknown) =>
    (await api(who, method, path, json)).status;

  // acme: owner alice; team devs with bob (a member without any grant). carol belongs to no organization.
  beforeAll(async () => {
    // No administrative organization: the spec's rule as written, any organization's owners may brand the site.
    harness = await bootTestPlatform({
      DEPLOYMENT_TYPE: 'SelfHostedProduction',
      RUN_MODE: 'dev',
      OFFLINE_INSTALLER: 'true',
      PLATFORM_ADMIN_ORG: 'none',
    });
    for (const login of ['alice', 'bob', 'carol']) await harness.signUp(login);
    expect(await status('alice', 'POST', '/orgs', { username: 'acme' })).toBe(201);
    const team = await api('alice', 'POST', '/orgs/acme/teams', { name: 'devs', type: 'general', permission: 'read' });
    expect(team.status).toBe(201);
    devs = team.body.id;
    expect(await status('alice', 'PUT', `/teams/${devs}/members/bob`)).toBe(204);
  }, 120_000);
  afterAll(() => harness?.stop());

  describe('GET /branding', () => {
    it('answers the defaults and the deployment facts to anyone, with a strong ETag', async () => {
      const res = await api(undefined, 'GET', '/branding');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        logo: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
        favicons: { any: expect.stringMatching(/^data:image\/svg\+xml;base64,/) },
        primaryColor: '#1f6feb',
        runMode: 'dev',
        deploymentType: 'SelfHostedProduction',
        isOfflineInstaller: true,
        showAppTag: false,
        appName: 'Platform',
      });
      expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
    });

    it('answers 304 without a body to a matching If-None-Match (exact, weak, in a list, or *) and 200 otherwise', async () => {
      const etag = (await api(undefined, 'GET', '/branding')).headers.get('etag')!;
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await api(undefined, 'GET', '/branding', undefined, { 'if-none-match': inm });
        expect(res.status).toBe(304);
        expect(res.body).toBeUndefined();
        expect(res.headers.get('etag')).toBe(etag);
      }
      const stale = await api(undefined, 'GET', '/branding', undefined, { 'if-none-match': '"something-else"' });
      expect(stale.status).toBe(200);
      expect(stale.body.appName).toBe('Platform');
    });
  });

  describe('POST /branding', () => {
    const change = { appName: 'Acme Cloud', primaryColor: '#FF8800', showAppTag: true, logo: `data:image/png;base64,${PNG_1x1}` };

    it('needs a token (401), the org context (400; 403 for an unknown org) and edit_branding_options:org (403)', async () => {
      expect(await status(undefined, 'POST', '/branding?org=acme', change)).toBe(401);
      const noOrg = await api('alice', 'POST', '/branding', change);
      expect(noOrg.status).toBe(400);
      expect(noOrg.body.message).toMatch(/org query parameter is required/);
      expect(await status('alice', 'POST', '/branding?org=nope', change)).toBe(403);
      // A non-member and a member without the relation.
      expect(await status('carol', 'POST', '/branding?org=acme', change)).toBe(403);
      const member = await api('bob', 'POST', '/branding?org=acme', change);
      expect(member.status).toBe(403);
      expect(member.body).toEqual({ message: 'you do not have the edit_branding_options:org permission', url: expect.any(String) });
      expect((await api(undefined, 'GET', '/branding')).body.appName).toBe('Platform');
    });

    it('lets the owner change options: 200 with the new branding, and the old ETag no longer matches', async () => {
      const before = (await api(undefined, 'GET', '/branding')).headers.get('etag')!;
      const res = await api('alice', 'POST', '/branding?org=acme', change);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        appName: 'Acme Cloud',
        primaryColor: '#ff8800',
        showAppTag: true,
        logo: change.logo,
        runMode: 'dev',
      });
      const after = res.headers.get('etag')!;
      expect(after).not.toBe(before);

      const reread = await api(undefined, 'GET', '/branding', undefined, { 'if-none-match': before });
      expect(reread.status).toBe(200);
      expect(reread.body).toEqual(res.body);
      expect(reread.headers.get('etag')).toBe(after);
      expect((await api(undefined, 'GET', '/branding', undefined, { 'if-none-match': after })).status).toBe(304);
    });

    it('changes only the options sent; a favicon is reported under its pixel size', async () => {
      const res = await api('alice', 'POST', '/branding?org=acme', { favicon: `data:image/png;base64,${PNG_1x1}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ appName: 'Acme Cloud', favicons: { '1x1': `data:image/png;base64,${PNG_1x1}` } });
    });

    it('answers 400 for invalid options and 422 for a body that is not an object, changing nothing', async () => {
      const before = await api(undefined, 'GET', '/branding');
      for (const bad of [
        { primaryColor: 'orange' },
        { primaryColor: 12 },
        { showAppTag: 'yes' },
        { appName: 'x'.repeat(65) },
        { logo: 'https://example.com/logo.png' },
        { logo: `data:image/jpeg;base64,${PNG_1x1}` },
        { logo: `data:image/png;base64,${Buffer.from('not an image').toString('base64')}` },
        { favicon: `data:text/html;base64,${Buffer.from('<h1>').toString('base64')}` },
        { logo: `data:image/png;base64,${Buffer.concat([Buffer.from(PNG_1x1, 'base64'), Buffer.alloc(300 * 1024)]).toString('base64')}` },
      ]) {
        const res = await api('alice', 'POST', '/branding?org=acme', bad);
        expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(/^invalid option/)]);
      }
      expect(await status('alice', 'POST', '/branding?org=acme', ['appName'])).toBe(422);
      const malformed = await harness.send('alice', 'POST', '/branding?org=acme', '{"appName":', { 'content-type': 'application/json' });
      expect(malformed.status).toBe(422);
      const after = await api(undefined, 'GET', '/branding');
      expect(after.body).toEqual(before.body);
      expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    });

    it('follows a custom role granting edit_branding_options on the very next request, and its removal too', async () => {
      const role = await api('alice', 'POST', '/authz/roles?org=acme', {
        name: 'brand-editors',
        permissions: [{ namespace: 'org', action: 'edit_branding_options' }],
        teamIDs: [devs],
      });
      expect(role.status).toBe(201);
      const granted = await api('bob', 'POST', '/branding?org=acme', { appName: 'Bob Was Here' });
      expect(granted.status).toBe(200);
      expect((await api(undefined, 'GET', '/branding')).body.appName).toBe('Bob Was Here');
      expect(await status('alice', 'DELETE', `/authz/roles/${role.body.id}?org=acme`)).toBe(204);
      expect(await status('bob', 'POST', '/branding?org=acme', { appName: 'Again' })).toBe(403);
    });

    it('lets a site admin change branding in any organization context', async () => {
      const res = await api('root', 'POST', '/branding?org=acme', { appName: '', primaryColor: '' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ appName: 'Platform', primaryColor: '#1f6feb' });
    });
  });

  describe('allowed domains', () => {
    it('GET answers an empty array to anyone when there is no whitelist', async () => {
      expect(await api(undefined, 'GET', '/allowed-domains')).toMatchObject({ status: 200, body: [] });
    });

    it('POST and PATCH need a token (401), the org context (400/404) and edit_allowed_domains:site_admin (403)', async () => {
      for (const method of ['POST', 'PATCH']) {
        expect(await status(undefined, method, '/allowed-domains?org=acme', { name: 'example.com' })).toBe(401);
        expect(await status('root', method, '/allowed-domains', { name: 'example.com' })).toBe(400);
        expect(await status('root', method, '/allowed-domains?org=nope', { name: 'example.com' })).toBe(404);
        // The organization's owner is no site admin.
        const owner = await api('alice', method, '/allowed-domains?org=acme', { name: 'example.com' });
        expect(owner.status).toBe(403);
        expect(owner.body.message).toBe('you do not have the edit_allowed_domains:site_admin permission');
        expect(await status('bob', method, '/allowed-domains?org=acme', { name: 'example.com' })).toBe(403);
      }
      expect((await api(undefined, 'GET', '/allowed-domains')).body).toEqual([]);
    });

    it('adds lower-cased domains (200 with the list), 409 on a duplicate, 400 on an invalid domain', async () => {
      expect(await api('root', 'POST', '/allowed-domains?org=acme', { name: 'Example.COM' })).toMatchObject({
        status: 200,
        body: ['example.com'],
      });
      expect(await api('root', 'POST', '/allowed-domains?org=acme', { name: 'corp.example.org' })).toMatchObject({
        status: 200,
        body: ['corp.example.org', 'example.com'],
      });
      const dup = await api('root', 'POST', '/allowed-domains?org=acme', { name: 'EXAMPLE.com' });
      expect(dup).toMatchObject({ status: 409, body: { message: 'domain example.com is already allowed' } });
      for (const bad of [{ name: 'not a domain' }, { name: 'localhost' }, { name: '10.0.0.1' }, { name: '-x.com' }, { name: 42 }, {}]) {
        expect(await status('root', 'POST', '/allowed-domains?org=acme', bad)).toBe(400);
      }
      expect((await api(undefined, 'GET', '/allowed-domains')).body).toEqual(['corp.example.org', 'example.com']);
    });

    it('removes with PATCH (200 with the list) and answers 400 for a domain not in the whitelist', async () => {
      expect(await api('root', 'PATCH', '/allowed-domains?org=acme', { name: 'example.COM' })).toMatchObject({
        status: 200,
        body: ['corp.example.org'],
      });
      const absent = await api('root', 'PATCH', '/allowed-domains?org=acme', { name: 'example.com' });
      expect(absent).toMatchObject({ status: 400, body: { message: 'domain example.com is not in the allowed domains' } });
      expect(await status('root', 'PATCH', '/allowed-domains?org=acme', { name: 'bad domain' })).toBe(400);
      expect(await api('root', 'PATCH', '/allowed-domains?org=acme', { name: 'corp.example.org' })).toMatchObject({
        status: 200,
        body: [],
      });
      expect((await api(undefined, 'GET', '/allowed-domains')).body).toEqual([]);
    });
  });

  describe('registration toggle', () => {
    it('GET answers RegistrationOpts to anyone; registration is closed until a site admin opens it', async () => {
      expect(await api(undefined, 'GET', '/disable-registration')).toMatchObject({ status: 200, body: { disableRegistration: true } });
      expect((await api(undefined, 'POST', '/user/signup', { username: 'early', email: 'early@example.com', password: 'early-password' })).status).toBe(403);
    });

    it('POST needs a token (401), the org context (400) and update_user_registration:site_admin (403)', async () => {
      expect(await status(undefined, 'POST', '/disable-registration?org=acme', { disableRegistration: true })).toBe(401);
      expect(await status('root', 'POST', '/disable-registration', { disableRegistration: true })).toBe(400);
      expect(await status('root', 'POST', '/disable-registration?org=nope', { disableRegistration: true })).toBe(404);
      const owner = await api('alice', 'POST', '/disable-registration?org=acme', { disableRegistration: true });
      expect(owner).toMatchObject({ status: 403, body: { message: 'you do not have the update_user_registration:site_admin permission' } });
      expect((await api(undefined, 'GET', '/disable-registration')).body).toEqual({ disableRegistration: true });
    });

    it('answers 415 for a body that is not JSON, changing nothing (it once read as "absent": registration on)', async () => {
      const before = (await api(undefined, 'GET', '/disable-registration')).body;
      const asText = await harness.send(
        'root',
        'POST',
        '/disable-registration?org=acme',
        JSON.stringify({ disableRegistration: !before.disableRegistration }),
        {
          'content-type': 'text/plain',
        },
      );
      expect(asText).toMatchObject({ status: 415, body: { message: 'the body must be application/json', url: expect.any(String) } });
      expect((await api(undefined, 'GET', '/disable-registration')).body).toEqual(before);
    });

    it('lets a site admin disable and enable registration; 422 for a non-boolean', async () => {
      expect(await api('root', 'POST', '/disable-registration?org=acme', { disableRegistration: true })).toMatchObject({
        status: 200,
        body: { disableRegistration: true },
      });
      expect((await api(undefined, 'GET', '/disable-registration')).body).toEqual({ disableRegistration: true });
      expect(await status('root', 'POST', '/disable-registration?org=acme', { disableRegistration: 'yes' })).toBe(422);
      expect((await api(undefined, 'GET', '/disable-registration')).body).toEqual({ disableRegistration: true });
      expect(await api('root', 'POST', '/disable-registration?org=acme', { disableRegistration: false })).toMatchObject({
        status: 200,
        body: { disableRegistration: false },
      });
      expect((await api(undefined, 'GET', '/disable-registration')).body).toEqual({ disableRegistration: false });
    });

    it('never fails open: an empty body, null or a misspelled key is 422 with its field errors and changes nothing', async () => {
      expect((await api('root', 'POST', '/disable-registration?org=acme', { disableRegistration: true })).status).toBe(200);
      for (const body of [{}, { disableRegistration: null }, { disableRegistraton: false }, { disableRegistration: false, enable: true }]) {
        const res = await api('root', 'POST', '/disable-registration?org=acme', body);
        expect(res).toMatchObject({ status: 422, body: { errors: [expect.objectContaining({ field: 'body' })] } });
        // Sign-up stays closed.
        expect((await api(undefined, 'GET', '/disable-registration')).body).toEqual({ disableRegistration: true });
      }
      const early = { username: 'opener', email: 'opener@example.com', password: 'opener-password' };
      expect((await api(undefined, 'POST', '/user/signup', early)).status).toBe(403);
    });
  });

  describe('other settings and switches', () => {
    it('refuses a body that gives no value on every settings row, and changes nothing', async () => {
      const branding = await api(undefined, 'GET', '/branding');
      for (const body of [{}, { appName: null }, { app_name: 'Typo' }]) {
        expect((await api('alice', 'POST', '/branding?org=acme', body)).status).toBe(422);
      }
      expect((await api(undefined, 'GET', '/branding')).headers.get('etag')).toBe(branding.headers.get('etag'));

      const requirement = (await api('root', 'GET', '/admin/two-factor')).body;
      for (const body of [{}, { requirement: null }, { requirment: 'all' }, { requirement: 'all', also: 'x' }]) {
        expect((await api('root', 'PUT', '/admin/two-factor', body)).status).toBe(422);
      }
      expect((await api('root', 'GET', '/admin/two-factor')).body).toEqual(requirement);

      const settings = (await api('carol', 'GET', '/user/settings')).body;
      for (const body of [{}, { hide_email: null }, { hideEmail: true }]) {
        expect((await api('carol', 'PATCH', '/user/settings', body)).status).toBe(422);
      }
      expect((await api('carol', 'GET', '/user/settings')).body).toEqual(settings);
      expect(await api('carol', 'PATCH', '/user/settings', { full_name: 'Carol C' })).toMatchObject({
        status: 200,
        body: { full_name: 'Carol C' },
      });

      // An endpoint on a public address (registration resolves nothing and sends nothing).
      const hook = await api('root', 'POST', '/admin/notifications/webhooks', { url: 'https://8.8.8.8/hook', events: ['quota.threshold'] });
      expect(hook.status).toBe(201);
      for (const body of [{}, { enabled: null }, { enable: false }, { enabled: false, disabled: true }]) {
        expect((await api('root', 'PATCH', `/admin/notifications/webhooks/${hook.body.id}`, body)).status).toBe(422);
      }
      expect((await api('root', 'GET', '/admin/notifications/webhooks')).body).toEqual([
        expect.objectContaining({ id: hook.body.id, enabled: true }),
      ]);
      expect((await api('root', 'PATCH', `/admin/notifications/webhooks/${hook.body.id}`, { enabled: false })).body.enabled).toBe(false);
      expect((await api('root', 'DELETE', `/admin/notifications/webhooks/${hook.body.id}`)).status).toBe(204);
    });
  });

  describe('webhook endpoint addresses', () => {
    // The platform runs without WEBHOOK_ALLOW_PRIVATE_ADDRESSES: only global unicast hosts are taken.
    it.each([
      ['IPv4-compatible IPv6', 'https://[::127.0.0.1]/hook', /IPv4-compatible/],
      ['IPv4-mapped IPv6 in hexadecimal', 'https://[::ffff:7f00:1]/hook', /loopback/],
      ['NAT64 of a loopback address', 'https://[64:ff9b::127.0.0.1]/hook', /loopback/],
      ['local-use NAT64', 'https://[64:ff9b:1::808:808]/hook', /NAT64/],
      ['6to4', 'https://[2002:7f00:1::1]/hook', /6to4/],
      ['Teredo', 'https://[2001::1]/hook', /Teredo/],
      ['benchmarking', 'https://198.18.0.1/hook', /reserved/],
      ['IETF protocol assignments', 'https://192.0.0.8/hook', /reserved/],
      ['an IPv4 address as one number', 'https://2130706433/hook', /127\.0\.0\.1 is a loopback/],
      ['an IPv4 address in hexadecimal, shortened', 'https://0x7f.1/hook', /127\.0\.0\.1 is a loopback/],
      ['a name of a loopback address', 'https://localhost/hook', /localhost resolves to \S+, a loopback/],
    ])('refuses %s (%s) with 422, registering nothing', async (_kind, url, why) => {
      const res = await api('root', 'POST', '/admin/notifications/webhooks', { url, events: ['quota.threshold'] });
      expect(res).toMatchObject({
        status: 422,
        body: { message: expect.stringMatching(why), errors: [expect.objectContaining({ field: 'url' })] },
      });
      const org = await api('alice', 'POST', '/orgs/acme/notifications/webhooks', { url, events: ['contract.expiring'] });
      expect(org.status).toBe(422);
      expect((await api('root', 'GET', '/admin/notifications/webhooks')).body).toEqual([]);
    });

    it.each(['https://8.8.8.8/hook', 'https://[2606:4700::1111]/hook', 'https://[64:ff9b::808:808]/hook'])(
      'takes the public address %s',
      async (url) => {
        const res = await api('alice', 'POST', '/orgs/acme/notifications/webhooks', { url, events: ['contract.expiring'] });
        expect(res).toMatchObject({ status: 201, body: { url, secret: expect.stringMatching(/^whsec_/) } });
        expect((await api('alice', 'DELETE', `/orgs/acme/notifications/webhooks/${res.body.id}`)).status).toBe(204);
      },
    );
  });
});

describe('branding through the administrative organization (PLATFORM_ADMIN_ORG, by default platform-admin)', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await bootTestPlatform({ PLATFORM_ADMIN_ORG: 'admins' });
    await t.signUp('alice');
    // Created at bootstrap and owned by the site admin.
    expect((await t.api('root', 'GET', '/orgs/admins/is-owner')).status).toBe(200);
    expect((await t.api('alice', 'POST', '/orgs', { username: 'alices-org' })).status).toBe(201);
  }, 120_000);
  afterAll(() => t?.stop());

  it('by default, only the bootstrap organization platform-admin may change the site-wide branding', async () => {
    const t2 = await bootTestPlatform();
    try {
      await t2.signUp('alice');
      expect((await t2.api('alice', 'POST', '/orgs', { username: 'alices-org' })).status).toBe(201);
      expect((await t2.api('alice', 'POST', '/branding?org=alices-org', { appName: 'Hijacked' })).status).toBe(403);
      expect((await t2.api('root', 'POST', '/branding?org=platform-admin', { appName: 'Mine' })).status).toBe(200);
      expect((await t2.api(undefined, 'GET', '/branding')).body.appName).toBe('Mine');
    } finally {
      await t2.stop();
    }
  }, 120_000);

  it('lets only the administrative organization change the site-wide branding', async () => {
    const other = await t.api('alice', 'POST', '/branding?org=alices-org', { appName: 'Hijacked' });
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('branding is managed through the administrative organization admins');
    expect((await t.api('root', 'POST', '/branding?org=admins', { appName: 'Platform' })).status).toBe(200);
    expect((await t.api(undefined, 'GET', '/branding')).body.appName).toBe('Platform');
  });
});
