import type { Browser, Page } from 'playwright-core';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium } from './console-browser';
import { bootTestPlatform, type TestPlatform } from './harness';
import { startTestProvider, type TestProvider } from './oidc-test-provider';

/**
 * Single sign-on in the web console in a real browser, through a real OpenID provider (oidc-provider on loopback):
 * an organization's owner maps a provider group to a team; a new person clicks "Sign in with Test IdP", signs in on
 * the provider's own login form, lands in the console signed in and finds the organization the group placed them
 * in. Once the provider no longer puts them in the group, signing out (of the provider too) and in again takes
 * them out of the team. The API is asked each time whether it agrees.
 *
 * A platform of its own, not the one of console.e2e.test.ts: its provider is set when it starts (OIDC_*), and its
 * password sign-in is only for the break-glass account, where every other area signs people in by password.
 */
jest.setTimeout(90_000);

describeInBrowser('single sign-on in the web console', () => {
  let provider: TestProvider;
  let harness: TestPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;

  beforeAll(async () => {
    // oidc-provider's notes on its development settings.
    jest.spyOn(console, 'warn').mockImplementation(() => {});
    jest.spyOn(console, 'info').mockImplementation(() => {});
    provider = await startTestProvider();
    [harness, browser] = await Promise.all([
      bootTestPlatform({
        OIDC_ISSUER_URL: provider.issuer,
        OIDC_CLIENT_ID: provider.clientId,
        OIDC_CLIENT_SECRET: provider.clientSecret,
        OIDC_SCOPES: 'openid profile email groups',
        OIDC_DISPLAY_NAME: 'Test IdP',
        PASSWORD_SIGN_IN_ONLY_FOR: 'root',
      }),
      launchConsoleChromium(),
    ]);
    provider.register(harness.platform.url);
    web = new ConsoleBrowser(browser, harness.platform.url);
  }, 240_000);
  // Chromium, the platform and the provider stop side by side, each whatever the others do.
  afterAll(async () => {
    const stopped = await Promise.allSettled([browser?.close(), harness?.stop(), provider?.stop()]);
    const failed = stopped.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }, 240_000);
  // The pages a failed test left open are closed first.
  afterEach(async () => {
    expect((await web?.endTest()) ?? []).toEqual([]);
  });

  /** From the console's sign-in screen through the provider's login form, back into the console signed in. */
  async function signInThroughProvider(page: Page, subject: string) {
    await page.goto(`${web.base}/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    // The provider's development login form: the subject is the login, any password will do.
    await page.locator('input[name="login"]').fill(subject);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.waitForURL((url) => url.origin === new URL(web.base).origin);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** Signs out of the console, then of the provider through the link the console offers, ending back at the console. */
  async function signOutOfBoth(page: Page) {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign out of Test IdP too' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.getByRole('button', { name: /sign me out/i }).click();
    await page.waitForURL((url) => url.origin === new URL(web.base).origin);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
  }

  it('signs a new person in through the provider into the team their group is mapped to, and out of it once the group is gone', async () => {
    // Registration open: the provider's person is new here.
    expect((await harness.api('root', 'POST', '/disable-registration?org=platform-admin', { disableRegistration: false })).status).toBe(
      200,
    );
    await harness.signUp('olivia');
    expect((await harness.api('olivia', 'POST', '/orgs', { username: 'sso-org' })).status).toBe(201);
    const team = (await harness.api('olivia', 'POST', '/orgs/sso-org/teams', { name: 'platform', type: 'general' })).body.id as number;
    expect((await harness.api('olivia', 'POST', '/orgs/sso-org/group-mappings', { group: 'platform-eng', team_id: team })).status).toBe(
      201,
    );
    const members = async () =>
      ((await harness.api('olivia', 'GET', `/teams/${team}/members`)).body as { login: string }[]).map((u) => u.login);
    const person = { preferred_username: 'hana', email: 'hana@example.com', email_verified: true, name: 'Hana' };
    provider.people.set('hana-sub', { ...person, groups: ['platform-eng', 'other'] });

    const { context, page } = await web.newPage();
    // The provider's development pages import a web font from Google; the test stays offline.
    await context.route('https://fonts.googleapis.com/**', (route) => route.fulfill({ status: 200, contentType: 'text/css', body: '' }));
    await page.goto(`${web.base}/`);
    // Everyone but the break-glass account is sent to the provider: its button, no password form.
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor();
    await page.getByRole('button', { name: 'Break-glass sign-in' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Password', exact: true }).count()).toBe(0);
    await web.shot(page, 'sign-in-sso');

    await signInThroughProvider(page, 'hana-sub');
    const cookie = await web.sessionCookie(context);
    expect(await harness.api(undefined, 'GET', '/user', undefined, cookie)).toMatchObject({
      status: 200,
      body: { login: 'hana', full_name: 'Hana' },
    });
    // The mapped group made hana a member of the team, so the organization is hers to open.
    await page.getByRole('link', { name: 'sso-org', exact: true }).click();
    await page.getByRole('heading', { name: 'sso-org', level: 1 }).waitFor();
    expect(await members()).toContain('hana');
    await signOutOfBoth(page);
    expect((await harness.api(undefined, 'GET', '/user', undefined, cookie)).status).toBe(401);

    // The provider no longer puts hana in the group: the next sign-in takes her out of the team.
    provider.people.set('hana-sub', { ...person, groups: ['other'] });
    await signInThroughProvider(page, 'hana-sub');
    expect(await harness.api(undefined, 'GET', '/user', undefined, await web.sessionCookie(context))).toMatchObject({
      status: 200,
      body: { login: 'hana' },
    });
    expect(await members()).not.toContain('hana');
    await page.getByRole('link', { name: 'Organizations' }).first().click();
    await page.getByRole('heading', { name: 'My organizations', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: 'sso-org', exact: true }).count()).toBe(0);
    await signOutOfBoth(page);
    await context.close();
  });
});
