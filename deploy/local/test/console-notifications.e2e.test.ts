import type { Browser } from 'playwright-core';
import { bootDemoPlatform, type DemoPlatform } from './demo-platform';
import { ConsoleBrowser, describeInBrowser, launchConsoleChromium } from './console-browser';
import { ROOT_PASSWORD } from './harness';

/**
 * The notifications screens of the web console in a real browser, on the platform with the demo data and no SMTP
 * server: a site admin registers a webhook endpoint (its signing secret shown once), disables it, and finds the
 * mail the demo's used-up quota contract sent its recipient, kept because no SMTP server is set; the demo
 * organization's owner finds its own endpoints on the organization's Notifications tab. The API is asked each time.
 */
jest.setTimeout(90_000);

describeInBrowser('the notifications screens in the web console', () => {
  let demo: DemoPlatform;
  let browser: Browser;
  let web: ConsoleBrowser;

  beforeAll(async () => {
    [demo, browser] = await Promise.all([
      // The endpoint registered below is on loopback; a short sweep so the kept mail is there at once.
      bootDemoPlatform({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', NOTICE_SWEEP_INTERVAL_MS: '300' }),
      launchConsoleChromium(),
    ]);
    web = new ConsoleBrowser(browser, demo.t.platform.url);
  }, 240_000);
  // Chromium and the demo platform stop side by side; on a loaded machine that has taken over a minute and a half.
  afterAll(async () => {
    await Promise.all([browser?.close(), demo?.stop()]);
  }, 240_000);
  afterEach(() => {
    expect(web.problems.splice(0)).toEqual([]);
  });

  it('registers a site webhook showing its secret once, disables it, and shows the kept mails', async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, 'root', ROOT_PASSWORD);
    await web.openAdminScreen(page, 'Notifications');
    await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();

    const form = page.getByRole('form', { name: 'Register webhook endpoint' });
    await form.getByRole('textbox', { name: /^URL/ }).fill('https://127.0.0.1:9443/platform');
    await form.getByRole('button', { name: 'Register endpoint' }).click();
    const secret = page.getByRole('region', { name: 'Signing secret of https://127.0.0.1:9443/platform' });
    const value = await secret.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(value).toMatch(/^whsec_/);
    const listed = await demo.t.api('root', 'GET', '/admin/notifications/webhooks');
    expect(listed.body.map((e: { url: string; enabled: boolean }) => [e.url, e.enabled])).toEqual([['https://127.0.0.1:9443/platform', true]]);
    expect(JSON.stringify(listed.body)).not.toContain(value);
    await web.shot(page, 'notifications-secret');
    await secret.getByRole('button', { name: 'I have copied it' }).click();
    await secret.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Disable https://127.0.0.1:9443/platform' }).click();
    await page.getByRole('button', { name: 'Enable https://127.0.0.1:9443/platform' }).waitFor();
    expect((await demo.t.api('root', 'GET', '/admin/notifications/webhooks')).body[0].enabled).toBe(false);

    const mails = page.getByRole('table', { name: /^Notice mails, newest first/ });
    // The demo's used-up quota contract told its recipient, the demo owner: kept, as no SMTP server is set.
    const owner = `${demo.manifest.owner.username}@example.com`;
    await mails.getByText(owner).first().waitFor();
    const row = mails.getByRole('row').filter({ hasText: owner }).filter({ hasText: 'has used 100%' });
    expect(await row.textContent()).toContain('Kept (no SMTP)');
    await web.shot(page, 'notifications');
    await context.close();
  });

  it("shows an organization's owner its endpoints on the organization's tab, and registers one there", async () => {
    const { context, page } = await web.newPage();
    await web.signIn(page, demo.manifest.owner.username, demo.manifest.owner.password);
    await page.goto(`${demo.t.platform.url}orgs/demo`);
    await page.getByRole('navigation', { name: 'Organization demo' }).getByRole('link', { name: 'Notifications' }).click();
    const form = page.getByRole('form', { name: 'Register webhook endpoint' });
    await form.getByRole('textbox', { name: /^URL/ }).fill('https://127.0.0.1:9443/demo');
    await form.getByRole('checkbox', { name: /Contract ending/ }).uncheck();
    await form.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('table', { name: 'Webhook endpoints of demo (1)' }).waitFor();
    const mine = await demo.t.api(demo.manifest.owner.username, 'GET', '/orgs/demo/notifications/webhooks');
    expect(mine.body.map((e: { url: string; events: string[] }) => [e.url, e.events])).toEqual([['https://127.0.0.1:9443/demo', ['quota.threshold']]]);
    // The site's endpoints are not the organization's.
    expect(mine.body.map((e: { url: string }) => e.url)).not.toContain('https://127.0.0.1:9443/platform');
    await context.close();
  });
});
