import { bootTestPlatform, basic, type TestPlatform } from './harness';
import { browse, CookieJar, startTestProvider, submitLogin, type TestProvider } from './oidc-test-provider';

describe('single sign-on through an OpenID provider', () => {
  let harness: TestPlatform;
  let provider: TestProvider;
  let platformHost: string;

  /** A fresh browser signs `subject` in through the provider; answers the page it lands on and its cookies. */
  async function signIn(subject: string) {
    const jar = new CookieJar();
    const atProvider = await browse(jar, `${harness.platform.url}api/v1/user/oidc/start`);
    expect(atProvider.url.origin).toBe(provider.issuer);
    const landed = await submitLogin(jar, atProvider, subject);
    return { jar, landed, session: jar.get(platformHost, 'platform_session') };
  }
  /** A browser signed in to the platform by `login`'s token starts linking, and `subject` signs in at the provider. */
  async function link(login: string, subject: string) {
    const jar = new CookieJar();
    const token = await harness.tokenFor(login, `${login}-password`, `link-${subject}`);
    const atProvider = await browse(jar, `${harness.platform.url}api/v1/user/oidc/link/start`, {
      headers: { authorization: `token ${token}` },
    });
    expect(atProvider.url.origin).toBe(provider.issuer);
    return submitLogin(jar, atProvider, subject);
  }
  const me = (session: string) => harness.api(undefined, 'GET', '/user', undefined, { cookie: `platform_session=${session}` });
  const setRegistration = (disable: boolean) =>
    harness.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: disable });

  beforeAll(async () => {
    // oidc-provider's notes on its development settings.
    jest.spyOn(console, 'warn').mockImplementation(() => {});
    jest.spyOn(console, 'info').mockImplementation(() => {});
    provider = await startTestProvider();
    harness = await bootTestPlatform(
      {
        OIDC_ISSUER_URL: provider.issuer,
        OIDC_CLIENT_ID: provider.clientId,
        OIDC_CLIENT_SECRET: provider.clientSecret,
        OIDC_SCOPES: 'openid profile email groups',
        OIDC_DISPLAY_NAME: 'Test IdP',
        PASSWORD_SIGN_IN_ONLY_FOR: 'root',
      },
      { apps: ['authz', 'orgs-teams'] },
    );
    provider.register(harness.platform.url);
    platformHost = new URL(harness.platform.url).host;
  }, 120_000);
  afterAll(async () => {
    await harness?.stop();
    await provider?.stop();
  });

  it('tells the console how to sign in, and keeps the password form for the break-glass account only', async () => {
    const methods = await harness.api(undefined, 'GET', '/sign-in/methods');
    expect(methods).toMatchObject({
      status: 200,
      body: {
        password: 'one-account',
        oidc: {
          name: 'Test IdP',
          start_url: '/api/v1/user/oidc/start',
          logout_url: expect.stringContaining(`${provider.issuer}/session/end`),
        },
      },
    });
    await harness.signUp('carol');
    const refused = await harness.api(undefined, 'POST', '/user/session', undefined, { authorization: basic('carol', 'carol-password') });
    expect(refused).toMatchObject({ status: 403, body: { message: expect.stringContaining('password sign-in is turned off') } });
    const root = await harness.api(undefined, 'POST', '/user/session', undefined, { authorization: basic('root', 'root-password') });
    expect(root.status).toBe(201);
  });

  it('links a verified e-mail to the existing account once, then finds it by subject', async () => {
    await harness.signUp('alice');
    provider.people.set('alice-sub', { preferred_username: 'alice.idp', email: 'alice@example.com', email_verified: true, name: 'Alice' });
    const first = await signIn('alice-sub');
    expect(first.landed.url.href).toBe(harness.platform.url);
    expect(first.session).toBeDefined();
    expect(await me(first.session!)).toMatchObject({ status: 200, body: { login: 'alice', id: harness.ids.alice } });
    // The session is the console's: its CSRF token is read back as after a password sign-in.
    const current = await harness.api(undefined, 'GET', '/user/session', undefined, { cookie: `platform_session=${first.session}` });
    expect(current).toMatchObject({ status: 200, body: { user: { login: 'alice' }, csrf_token: expect.any(String) } });

    // The provider's e-mail changes: the person is still alice, found by the subject.
    provider.people.set('alice-sub', { preferred_username: 'alice.idp', email: 'alice.new@example.com', email_verified: true });
    const again = await signIn('alice-sub');
    expect(await me(again.session!)).toMatchObject({ status: 200, body: { login: 'alice' } });
  }, 60_000);

  it('never links an unverified e-mail, and creates new people only while registration permits', async () => {
    await harness.signUp('bob');
    provider.people.set('mallory-sub', { preferred_username: 'bob', email: 'bob@example.com', email_verified: false });
    const unverified = await signIn('mallory-sub');
    expect(unverified.landed.res.status).toBe(403);
    expect(unverified.landed.body).toContain('has not verified your e-mail address bob@example.com');
    expect(unverified.session).toBeUndefined();

    provider.people.set('dave-sub', { preferred_username: 'dave', email: 'dave@corp.example', email_verified: true, name: 'Dave' });
    expect((await setRegistration(true)).status).toBe(200);
    const closed = await signIn('dave-sub');
    expect(closed.landed.res.status).toBe(403);
    expect(closed.landed.body).toContain('registration is disabled on this site');
    expect((await harness.api('root', 'GET', '/users/dave')).status).toBe(404);

    expect((await setRegistration(false)).status).toBe(200);
    expect((await harness.api('root', 'POST', '/allowed-domains?org=platform-admin', { name: 'corp.example' })).status).toBe(200);
    provider.people.set('erin-sub', { preferred_username: 'erin', email: 'erin@elsewhere.example', email_verified: true });
    const outside = await signIn('erin-sub');
    expect(outside.landed.res.status).toBe(403);
    expect(outside.landed.body).toContain('sign-up is open to email addresses of corp.example only');

    const made = await signIn('dave-sub');
    expect(made.landed.url.href).toBe(harness.platform.url);
    expect(await me(made.session!)).toMatchObject({ status: 200, body: { login: 'dave', email: 'dave@corp.example', full_name: 'Dave' } });
    // A name taken locally is not the person's: the new account gets another.
    provider.people.set('other-bob-sub', { preferred_username: 'bob', email: 'bob2@corp.example', email_verified: true });
    const otherBob = await signIn('other-bob-sub');
    expect(await me(otherBob.session!)).toMatchObject({ status: 200, body: { login: 'bob-2' } });
  }, 60_000);

  it("places a person in the teams an owner mapped their provider's groups to, and takes them out when the groups change", async () => {
    await harness.signUp('olivia');
    await harness.signUp('gina');
    expect((await harness.api('olivia', 'POST', '/orgs', { username: 'sso-org' })).status).toBe(201);
    const team = (await harness.api('olivia', 'POST', '/orgs/sso-org/teams', { name: 'platform', type: 'general' })).body.id as number;
    const mapped = await harness.api('olivia', 'POST', '/orgs/sso-org/group-mappings', { group: 'platform-eng', team_id: team });
    expect(mapped).toMatchObject({ status: 201, body: { group: 'platform-eng', team: { id: team, name: 'platform' }, site_admin: false } });
    expect((await harness.api('olivia', 'POST', '/orgs/sso-org/group-mappings', { group: 'platform-eng', team_id: team })).status).toBe(
      409,
    );
    expect((await harness.api('olivia', 'GET', '/orgs/sso-org/group-mappings')).body).toEqual([mapped.body]);
    const members = async () =>
      ((await harness.api('olivia', 'GET', `/teams/${team}/members`)).body as { login: string }[]).map((u) => u.login);

    provider.people.set('gina-sub', {
      preferred_username: 'gina',
      email: 'gina@example.com',
      email_verified: true,
      groups: ['platform-eng', 'other'],
    });
    const first = await signIn('gina-sub');
    expect(await me(first.session!)).toMatchObject({ status: 200, body: { login: 'gina' } });
    expect(await members()).toContain('gina');

    provider.people.set('gina-sub', { preferred_username: 'gina', email: 'gina@example.com', email_verified: true, groups: ['other'] });
    const second = await signIn('gina-sub');
    expect(second.session).toBeDefined();
    expect(await members()).not.toContain('gina');

    // Once the owner removes the mapping, the group no longer places anyone.
    expect((await harness.api('olivia', 'DELETE', `/orgs/sso-org/group-mappings/${mapped.body.id}`)).status).toBe(204);
    provider.people.set('gina-sub', {
      preferred_username: 'gina',
      email: 'gina@example.com',
      email_verified: true,
      groups: ['platform-eng'],
    });
    await signIn('gina-sub');
    expect(await members()).not.toContain('gina');
  }, 60_000);

  it('refuses a disabled account, a callback without its flow, and ends the session on sign-out', async () => {
    provider.people.set('frank-sub', { preferred_username: 'frank', email: 'frank@corp.example', email_verified: true });
    const frank = await signIn('frank-sub');
    const csrf = (await harness.api(undefined, 'GET', '/user/session', undefined, { cookie: `platform_session=${frank.session}` })).body
      .csrf_token;
    const out = await harness.api(undefined, 'DELETE', '/user/session', undefined, {
      cookie: `platform_session=${frank.session}`,
      'x-csrf-token': csrf,
    });
    expect(out.status).toBe(204);
    expect((await me(frank.session!)).status).toBe(401);

    expect((await harness.api('root', 'PATCH', '/admin/users/frank', { active: false })).status).toBe(200);
    const disabled = await signIn('frank-sub');
    expect(disabled.landed.res.status).toBe(403);
    expect(disabled.landed.body).toContain('user is not active');
    expect(disabled.session).toBeUndefined();

    const forged = await harness.send(undefined, 'GET', '/user/oidc/callback?code=abc&state=xyz');
    expect(forged.status).toBe(400);
    expect(forged.body).toContain('was not started here');
  }, 60_000);

  it('gives no account and no link for an e-mail the provider has not verified or leaves unsaid, and keeps a linked account to its first subject', async () => {
    expect((await setRegistration(false)).status).toBe(200);
    const noAccount = async () => (await harness.api('root', 'GET', '/admin/users?q=nora%40corp.example')).body;
    provider.people.set('mallory-nora', { preferred_username: 'nora', email: 'nora@corp.example', email_verified: false });
    const unverified = await signIn('mallory-nora');
    expect(unverified.landed.res.status).toBe(403);
    expect(unverified.landed.body).toContain('the identity provider has not verified your e-mail address nora@corp.example');
    expect(unverified.landed.body).toContain('link the provider from your account page');
    expect(unverified.session).toBeUndefined();
    provider.people.set('silent-nora', { preferred_username: 'nora', email: 'nora@corp.example' });
    expect((await signIn('silent-nora')).landed.res.status).toBe(403);
    expect(await noAccount()).toEqual([]);

    // The real nora, vouched for by the provider, gets the account; the unverified person still gets nothing.
    provider.people.set('real-nora', { preferred_username: 'nora', email: 'nora@corp.example', email_verified: true });
    const real = await signIn('real-nora');
    expect(await me(real.session!)).toMatchObject({
      status: 200,
      body: { login: 'nora', email: 'nora@corp.example', email_verified: true },
    });
    expect((await signIn('mallory-nora')).session).toBeUndefined();
    // Another subject claiming the same verified address does not reach the account linked to the first.
    provider.people.set('second-nora', { preferred_username: 'nora', email: 'nora@corp.example', email_verified: true });
    const second = await signIn('second-nora');
    expect(second.landed.res.status).toBe(403);
    expect(second.landed.body).toContain('it is linked to another account at this identity provider');
    expect(second.session).toBeUndefined();
  }, 60_000);

  it("does not hand a sign-up's unverified address to the person the provider vouches for", async () => {
    // The attacker signs up with carol's address and a password of their own (the site lists corp.example).
    const attacker = await harness.api(undefined, 'POST', '/user/signup', {
      username: 'carol-corp',
      email: 'carol@corp.example',
      password: 'attacker-password',
    });
    expect(attacker).toMatchObject({ status: 201, body: { user: { login: 'carol-corp', email_verified: false }, session: null } });
    provider.people.set('real-carol', { preferred_username: 'carol', email: 'carol@corp.example', email_verified: true });
    const carol = await signIn('real-carol');
    expect(carol.landed.res.status).toBe(403);
    expect(carol.landed.body).toContain('its own address has not been verified');
    expect(carol.session).toBeUndefined();
    const listed = (await harness.api('root', 'GET', '/admin/users?q=carol-corp')).body;
    expect(listed).toEqual([expect.objectContaining({ login: 'carol-corp', email_verified: false })]);
  }, 60_000);

  it("links an account to the provider by its owner's own act, one subject per account, and unlinks it", async () => {
    await harness.signUp('hank');
    await harness.signUp('ivy');
    provider.people.set('hank-at-idp', { preferred_username: 'hank.idp', email: 'h@personal.example', email_verified: false });
    const linked = await link('hank', 'hank-at-idp');
    expect(linked.url.pathname).toBe('/account');
    expect(linked.url.searchParams.get('linked')).toBe('1');
    const links = await harness.api('hank', 'GET', '/user/oidc/links');
    expect(links).toMatchObject({ status: 200, body: [{ issuer: provider.issuer, subject: 'hank-at-idp' }] });
    // Now the provider's person signs in to hank, whatever e-mail the provider says.
    expect(await me((await signIn('hank-at-idp')).session!)).toMatchObject({ status: 200, body: { login: 'hank' } });

    // Another account cannot take the subject, and hank cannot add a second one.
    const taken = await link('ivy', 'hank-at-idp');
    expect(taken.res.status).toBe(403);
    expect(taken.body).toContain('already linked to another platform account');
    provider.people.set('hank-second', { preferred_username: 'hank2', email: 'h2@personal.example', email_verified: true });
    const secondSubject = await link('hank', 'hank-second');
    expect(secondSubject.res.status).toBe(403);
    expect(secondSubject.body).toContain('unlink it first');

    const issuer = encodeURIComponent(provider.issuer);
    expect((await harness.api('hank', 'DELETE', `/user/oidc/links?issuer=${issuer}`)).status).toBe(204);
    expect((await harness.api('hank', 'DELETE', `/user/oidc/links?issuer=${issuer}`)).status).toBe(404);
    expect((await harness.api('hank', 'GET', '/user/oidc/links')).body).toEqual([]);
    const after = await signIn('hank-at-idp');
    expect(after.landed.res.status).toBe(403);
    expect(after.session).toBeUndefined();
  }, 60_000);
});
